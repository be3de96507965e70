/** Fields of a log line. Never bodies, never key material; headers only content-type and content-length. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** A structured logger writing one JSON object per line. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Where log lines go (stdout in production; an array in tests). */
export type LogSink = (line: string) => void;

/** A JSON-lines logger: `{"ts","level","msg",...fields}`. */
export function createLogger(sink: LogSink, now: () => Date = () => new Date()): Logger {
  const write = (level: string, msg: string, fields?: LogFields) => {
    sink(JSON.stringify({ ts: now().toISOString(), level, msg, ...fields }) + '\n');
  };
  return {
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
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
