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
    if (LOG_LEVELS.indexOf(level) < min) return;
    sink(JSON.stringify({ ts: now().toISOString(), level, msg, ...fields }) + '\n');
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
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
