/** rft's version, read from deno.json so there is one place to change it. */

import denoJson from "../deno.json" with { type: "json" };

/** The version of this rft checkout. */
export const VERSION: string = denoJson.version;
