/**
 * rft's public API: what plugins, scripts and examples import. This file only re-exports;
 * everything it names is documented where it is defined.
 *
 * @example
 * ```ts
 * import { compileGraph, getGpu, Graph, grad, ops } from "./mod.ts";
 * const gpu = await getGpu();
 * const g = new Graph();
 * const x = g.input([2, 3]);
 * const y = ops.sumLast(ops.square(x));
 * const [dx] = grad(y, [x]);
 * const exe = await compileGraph(gpu, [y, dx]);
 * await exe.run(new Map([[x, new Float32Array([1, 2, 3, 4, 5, 6])]]));
 * const [value, gradient] = await exe.read([y, dx]);
 * ```
 */

export { VERSION } from "./src/version.ts";
export { getGpu, type GpuContext, NoAdapterError } from "./src/gpu/device.ts";
export { KernelCompileError } from "./src/gpu/pipeline_cache.ts";
export { readBuffers, readF32 } from "./src/gpu/readback.ts";
export { Graph } from "./src/graph/graph.ts";
export { type DType, type HostData, Tensor, type Variable } from "./src/graph/tensor.ts";
export { compileGraph, Executable, type Feed } from "./src/graph/executable.ts";
export { grad } from "./src/graph/autodiff.ts";
export type { KernelLaunch, LaunchContext, OpDef } from "./src/graph/op.ts";
export * as ops from "./src/ops/mod.ts";
export {
  createModel,
  type GenerationResult,
  loadModel,
  type LoadOptions,
  type LogprobOptions,
  PolicyModel,
} from "./src/model/policy.ts";
export {
  type EngineStats,
  type GeneratedSample,
  type GenerateOptions,
  GenerationEngine,
} from "./src/engine/engine.ts";
export { initParameters } from "./src/model/init.ts";
/** A policy as a standard ONNX model (input_ids, attention_mask -> logits); see README. */
export { exportOnnx, type OnnxExportOptions } from "./src/export/export_onnx.ts";
/** A policy as a model directory transformers.js generates from (KV cache, tokenizer); README. */
export {
  exportTransformersJs,
  type TransformersJsExportOptions,
} from "./src/export/export_transformers_js.ts";
export { type ModelConfig, parseHfConfig, readHfConfig } from "./src/model/hf_config.ts";
export { loadTokenizer, type Tokenizer } from "./src/model/tokenizer.ts";
export { CharTokenizer } from "./src/model/char_tokenizer.ts";
export {
  CHAR_TOOL_CHAT_TEMPLATE,
  type ChatMessage,
  type ToolCall,
  type ToolDefinition,
} from "./src/model/chat_template.ts";
export { type Experience, type ExperienceInfo, newEid } from "./src/buffer/experience.ts";
export { type Task, taskAnswer, taskMessages, taskPrompt } from "./src/buffer/task.ts";
export { Taskset, type TasksetConfig } from "./src/buffer/taskset.ts";
export { ExperienceBuffer, type ExperienceBufferOptions } from "./src/buffer/experience_buffer.ts";
export { EXPERIENCE_OPERATORS, runOperators } from "./src/buffer/operators/mod.ts";
export {
  type SelectorContext,
  type SelectorFactory,
  TASK_SELECTORS,
  type TaskSelector,
} from "./src/buffer/selectors/mod.ts";
export { type ScheduledTaskset, TasksetScheduler } from "./src/buffer/taskset_scheduler.ts";
export { configure, type Configured, Registry } from "./src/util/registry.ts";
export { ADVANTAGE_FN } from "./src/algorithm/advantage/mod.ts";
export { POLICY_LOSS_FN } from "./src/algorithm/policy_loss/mod.ts";
export { KL_FN } from "./src/algorithm/kl.ts";
export { ENTROPY_LOSS_FN } from "./src/algorithm/entropy.ts";
export { ALGORITHM_TYPE } from "./src/algorithm/algorithm_type.ts";
export { TrainStep, type TrainStepConfig } from "./src/trainer/train_step.ts";
export { SAMPLE_STRATEGY } from "./src/algorithm/sample_strategy.ts";
export {
  computeReward,
  createWorkflow,
  Episode,
  experienceFromRollout,
  experienceFromSequence,
  resolveRewardFn,
  REWARD_FUNCTIONS,
  type RewardFnFactory,
  type RewardInput,
  type RewardResult,
  type Rollout,
  type RolloutModel,
  type RolloutOptions,
  type Workflow,
  workflowArgs,
  type WorkflowContext,
  type WorkflowFactory,
  WORKFLOWS,
  type WorkflowServices,
} from "./src/workflow/mod.ts";
export {
  OpenAIConversation,
  type OpenAIEndpoint,
  type RecordedCall,
  RecordedConversation,
  type RecordedSample,
} from "./src/workflow/mod.ts";
export { OpenAIServer, type OpenAIServerOptions } from "./src/serve/openai_server.ts";
/** Tool-call parsers (plugins register theirs) and the grammars their calls are decoded under. */
export {
  callObjectGrammar,
  type ParsedReply,
  type ParsedToolCall,
  TOOL_CALL_PARSERS,
  type ToolCallParser,
} from "./src/tool_calls/mod.ts";
export * as grammar from "./src/constrained/grammar.ts";
export {
  anyJsonObject,
  type JsonSchema,
  jsonSchemaGrammar,
} from "./src/constrained/json_schema_grammar.ts";
export { type Completion, ServedModel } from "./src/serve/served_model.ts";
export { AuxiliaryModels } from "./src/auxiliary/auxiliary_models.ts";
export { type FloatTensor, OnnxModel } from "./src/auxiliary/onnx_model.ts";
export { PolicyRolloutModel } from "./src/workflow/policy_rollout_model.ts";
export { ConfigError } from "./src/config/config_error.ts";
export { loadConfig } from "./src/config/load_config.ts";
export type { RunConfig, StageConfig } from "./src/config/run_config.ts";
export { runConfig, type RunSummary } from "./src/run/run.ts";
export { formatSummary } from "./src/cli/run_summary.ts";
export { modelDirectory } from "./src/cli/model_directory.ts";
export { loadPlugins, PluginError } from "./src/run/run_plugins.ts";
export { Monitor } from "./src/monitor/monitor.ts";
export {
  type MonitorContext,
  type MonitorFactory,
  MONITORS,
} from "./src/monitor/monitor_registry.ts";
export type { MetricsRecord, MetricsSink, StageInfo } from "./src/monitor/metrics_sink.ts";
export { readMetrics } from "./src/monitor/metrics_log.ts";
export { writePlot } from "./src/monitor/plot.ts";
