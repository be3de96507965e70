import type { Redactor } from '@org/workflow-engine';

/** Where JSON lines go: `process.stdout` in production, an array in tests. */
export type LineSink = (line: string) => void;

/** Log levels of agent lines (`fatal` is written only by main.ts, to stderr). */
export type Level = 'info' | 'warn' | 'error';

/** `LOG_LEVEL` values, lowest first: lines below the configured level are not written (metrics always are). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Scalar fields of a log line. */
export type Fields = Record<string, string | number | boolean | undefined | readonly object[]>;

/** A log entry from a workflow (engine `log`); `debug` carries engine diagnostics (an errored `sendToStep` callee). */
export interface WorkflowLogEntry {
  level: LogLevel;
  message: string;
  stepId?: string | undefined;
  source: string;
}

/** A metric from a workflow (engine `metric`, `sendMetric`). */
export interface WorkflowMetric {
  key: string;
  value: number;
  timestamp: number;
  dimensions: Record<string, string>;
}

/**
 * The one output of the agent: JSON lines, every string field passed through the redactor before it is
 * serialised (so escaping cannot hide a secret from the match). Metrics have secrets stripped from keys and
 * dimension names and values (docs/interfaces.md §5.5).
 */
export interface Output {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  workflowLog(deploymentId: string, entry: WorkflowLogEntry): void;
  metric(deploymentId: string, m: WorkflowMetric): void;
}

function redactFields(fields: Fields, redactor: Redactor): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = typeof v === 'string' ? redactor.redact(v) : v;
  }
  return out;
}

/** Creates the output over a sink (one line per call, newline-terminated); lines below `minLevel` are dropped. */
export function createOutput(
  sink: LineSink,
  redactor: Redactor,
  now: () => Date = () => new Date(),
  minLevel: LogLevel = 'info',
): Output {
  const min = LOG_LEVELS.indexOf(minLevel);
  const write = (level: LogLevel, msg: string, fields: Fields = {}) => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const line = {
      ts: now().toISOString(),
      level,
      msg: redactor.redact(msg),
      ...redactFields(fields, redactor),
    };
    sink(JSON.stringify(line) + '\n');
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    workflowLog: (deploymentId, e) =>
      write(e.level, e.message, { deploymentId, stepId: e.stepId, source: e.source }),
    metric: (deploymentId, m) => {
      const dimensions = Object.create(null) as Record<string, string>; // __proto__ stays a dimension
      for (const [k, v] of Object.entries(m.dimensions)) {
        const name = redactor.strip(k);
        if (name !== '') dimensions[name] = redactor.strip(String(v));
      }
      const line = {
        ts: now().toISOString(),
        type: 'metric',
        deploymentId,
        key: redactor.strip(m.key),
        value: m.value,
        timestamp: m.timestamp,
        dimensions,
      };
      sink(JSON.stringify(line) + '\n');
    },
  };
}
