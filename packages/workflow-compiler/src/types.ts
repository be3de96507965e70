import type { JsonObject, JsonValue } from './json-value.js';

/** `true | false | "true" | "false" | "${VAR}"` (docs/interfaces.md §3). */
export type StringBoolean = boolean | string;

/** A `comment` value; removed by compile. */
export type Comment = string | string[];

/** A processor: inline script, resource reference, or chain (docs/interfaces.md §4.3). */
export interface Processor {
  comment?: Comment;
  script?: string | null;
  resource?: string;
  /** Set by compile: the `resource` path the `script` was loaded from. Informational only. */
  resourceName?: string;
  processors?: Processor[];
  data?: JsonObject;
}

/** Trigger kinds of a step (docs/interfaces.md §4.4); several may be set at once. */
export interface Trigger {
  comment?: Comment;
  runOnce?: StringBoolean;
  runOnceNoTrace?: StringBoolean;
  timer?: { period: number; delay?: number; noTrace?: StringBoolean; comment?: Comment };
  http?: {
    server: string;
    path: string;
    method?: string;
    multiPartUploadByteLimit?: number;
    noTrace?: StringBoolean;
    comment?: Comment;
  };
  fileWatcher?: JsonObject;
  tcp?: JsonObject;
  deploymentAccess?: { ids: string[]; noTrace?: StringBoolean; comment?: Comment };
}

/** Step fields (docs/interfaces.md §4.2); `stepId` is required on steps, absent in `defaultStepProperties`. */
export interface StepProperties {
  comment?: Comment;
  stepId?: string;
  type?: 'scripted' | 'scripted-split-aggregate' | 'scripted-auth' | 'httpFile';
  enabled?: StringBoolean;
  debug?: StringBoolean;
  data?: JsonObject;
  timestampOverride?: number;
  trigger?: Trigger;
  authenticationProcessor?: Processor;
  urlGenerator?: Processor;
  payloadGenerator?: Processor;
  resultsProcessor?: Processor;
  splitGenerator?: Processor;
  itemResultProcessor?: Processor;
  httpConnectFailedProcessor?: Processor;
  httpStatusHandling?: { [status: string]: Processor | Comment };
  httpTimeout?: number;
  singleThreaded?: 'none' | 'return';
  persistenceFile?: string;
  persistenceFileFlush?: StringBoolean;
  persistence?: JsonObject;
}

/** One step of a workflow. */
export interface Step extends StepProperties {
  stepId: string;
}

/** One workflow inside a workflow file. */
export interface WorkflowDefinition {
  comment?: Comment;
  name: string;
  enabled?: StringBoolean;
  steps: Step[];
  defaultStepProperties?: StepProperties;
  data?: JsonObject;
}

/** A workflow file (docs/interfaces.md §4.1). */
export interface WorkflowFile {
  comment?: Comment;
  workflows: WorkflowDefinition[];
  data?: JsonObject;
  defaultStepProperties?: StepProperties;
  messages?: { expiry?: number; stepId?: string; key?: string; value?: JsonValue; comment?: Comment }[];
  random?: number;
}

/** A compiled workflow file: no comments, every `resource` replaced by `script` (+ `resourceName`). */
export type CompiledWorkflow = WorkflowFile & { readonly __compiled?: never };
