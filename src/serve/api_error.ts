/**
 * Errors of the OpenAI-compatible server as the OpenAI API writes them: an HTTP status and a
 * JSON body `{"error": {"message", "type", "param", "code"}}`. Only the shape: which request is
 * wrong is decided by the parsers and handlers that throw it.
 */

/** The `type` of an OpenAI error object. */
export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error";

/** A request the server refuses (4xx) or fails to serve (5xx), in OpenAI's error shape. */
export class ApiError extends Error {
  /**
   * `status`: the HTTP status; `param`: the request field at fault, if one is; `code`: a short
   * machine-readable reason (e.g. `context_length_exceeded`).
   */
  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType = "invalid_request_error",
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The error object OpenAI clients parse. */
  toJSON(): {
    error: { message: string; type: string; param: string | null; code: string | null };
  } {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}

/** A 400 `invalid_request_error` about request field `param`. */
export function badRequest(param: string | null, message: string, code?: string): ApiError {
  return new ApiError(400, message, "invalid_request_error", param, code ?? null);
}

/** The JSON response of `err`; anything that is not an {@link ApiError} becomes a 500. */
export function errorResponse(err: unknown): Response {
  const apiError = err instanceof ApiError ? err : new ApiError(
    500,
    `Cannot serve the request: ${(err as Error)?.message ?? String(err)}`,
    "server_error",
  );
  return Response.json(apiError.toJSON(), { status: apiError.status });
}
