/** Fields of a log line. Never bodies, never key material; headers only content-type and content-length. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** `LOG_LEVEL` values, lowest first: lines below the configured level are not written. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A structured logger writing one JSON object per line. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Where log lines go (stdout in production; an array in tests). */
export type LogSink = (line: string) => void;

/** A JSON-lines logger: `{"ts","level","msg",...fields}`; lines below `minLevel` are dropped. */
export function createLogger(
  sink: LogSink,
  now: () => Date = () => new Date(),
  minLevel: LogLevel = 'info',
): Logger {
  const min = LOG_LEVELS.indexOf(minLevel);
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (fields !== undefined && !plainFields(fields)) {
      sink(JSON.stringify({ ts: now().toISOString(), level, msg, ...fields }) + '\n');
      return;
    }
    // The same text as stringifying `{ ts, level, msg, ...fields }`, without building that object (a request
    // line per request): the fields' own JSON, its `{` replaced by the three leading members.
    const rest = fields === undefined ? '{}' : JSON.stringify(fields);
    const head = `{"ts":"${now().toISOString()}","level":"${level}","msg":${JSON.stringify(msg)}`;
    sink(head + (rest.length === 2 ? '}\n' : ',' + rest.slice(1) + '\n'));
  };
  const at = (level: LogLevel) =>
    LOG_LEVELS.indexOf(level) < min
      ? () => {}
      : (msg: string, fields?: LogFields) => write(level, msg, fields);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * True when `{ ts, level, msg, ...fields }` keeps the fields in their own order after the three leading members:
 * no field named `ts`, `level` or `msg` (it would replace that member) and no integer-like name (an object lists
 * those first).
 */
function plainFields(fields: LogFields): boolean {
  for (const k in fields) {
    if (k === 'ts' || k === 'level' || k === 'msg') return false;
    const c = k.charCodeAt(0);
    if (c >= 0x30 && c <= 0x39) return false;
  }
  return true;
}

/**
 * A sink that collects lines and writes them in one call per event-loop turn (one syscall for many request
 * lines under load). `flush()` writes what is pending at once; call it before exiting.
 */
export function createBatchingSink(write: (text: string) => void): LogSink & { flush(): void } {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    write(text);
  };
  const sink = (line: string) => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return Object.assign(sink, { flush });
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
