// A small driver for a real Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: the browser reads
// commands on fd 3 and writes answers on fd 4, each a JSON message ended by a NUL byte). It does what the page's
// tests need: open a URL, choose files in an <input type=file>, type, press keys, evaluate, take a screenshot, and
// list every network request the page made.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** Where Debian's Chromium is (installed by scripts/test.sh when missing). */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

export interface RequestSeen {
  readonly url: string;
  readonly type: string | undefined;
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  private readonly listeners = new Set<(m: Message) => void>();
  private buffer = '';

  private constructor(
    private readonly proc: ChildProcess,
    private readonly input: Writable,
    output: Readable,
    private readonly profile: string,
  ) {
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const m = JSON.parse(this.buffer.slice(0, end)) as Message;
        this.buffer = this.buffer.slice(end + 1);
        this.dispatch(m);
      }
    });
  }

  static async launch(): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'inspect-page-chromium-'));
    const proc = spawn(
      CHROMIUM,
      [
        '--headless=new',
        '--remote-debugging-pipe',
        `--user-data-dir=${profile}`,
        // Root in a container has no user namespace for the sandbox; the page under test is our own.
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-extensions',
        '--allow-file-access-from-files',
        '--window-size=1200,900',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const b = new Browser(proc, proc.stdio[3] as Writable, proc.stdio[4] as Readable, profile);
    await new Promise<void>((resolve, reject) => {
      proc.once('error', reject);
      proc.once('exit', (code) => reject(new Error(`chromium exited (${code}): ${stderr}`)));
      b.send('Browser.getVersion').then(() => resolve(), reject);
    });
    return b;
  }

  private dispatch(m: Message): void {
    if (m.id !== undefined) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error.message));
      else p?.resolve(m.result ?? {});
      return;
    }
    for (const l of this.listeners) l(m);
  }

  send(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const msg: Message = { id, method, params, ...(sessionId === undefined ? {} : { sessionId }) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.input.write(`${JSON.stringify(msg)}\0`);
    });
  }

  on(listener: (m: Message) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A new tab, with the network recorder on before anything is loaded. */
  async newPage(): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as {
      targetId: string;
    };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    const page = new Page(this, sessionId, targetId);
    await page.init();
    return page;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    try {
      await Promise.race([this.send('Browser.close'), exited]);
    } catch {
      // Already gone.
    }
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
    await exited;
    // Chromium's helper processes may still be writing the profile as the browser exits: retry, and leave a
    // leftover temporary folder rather than fail the tests over it.
    try {
      rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {
      // Left in the temporary directory.
    }
  }
}

export class Page {
  /** Every request the page started, in order (the document itself included). */
  readonly requests: RequestSeen[] = [];
  private loads = 0;
  private readonly loadWaiters: (() => void)[] = [];

  constructor(
    private readonly browser: Browser,
    private readonly sessionId: string,
    private readonly targetId: string,
  ) {
    browser.on((m) => {
      if (m.sessionId !== sessionId) return;
      if (m.method === 'Network.requestWillBeSent') {
        const p = m.params as { request: { url: string }; type?: string };
        this.requests.push({ url: p.request.url, type: p.type });
      } else if (m.method === 'Page.loadEventFired') {
        this.loads++;
        for (const w of this.loadWaiters.splice(0)) w();
      }
    });
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.browser.send(method, params, this.sessionId);
  }

  async init(): Promise<void> {
    await this.send('Page.enable');
    await this.send('Network.enable');
    await this.send('Runtime.enable');
    await this.send('DOM.enable');
  }

  async goto(url: string): Promise<void> {
    const before = this.loads;
    const loaded = new Promise<void>((resolve) => this.loadWaiters.push(resolve));
    const r = (await this.send('Page.navigate', { url })) as { errorText?: string };
    if (r.errorText !== undefined) throw new Error(`navigation to ${url} failed: ${r.errorText}`);
    if (this.loads === before) await loaded;
  }

  /** Evaluates an expression in the page (awaiting a promise) and returns its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', {
      expression,
      awaitPromise: true,
      returnByValue: true,
    })) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails !== undefined) {
      throw new Error(`page error: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    }
    return r.result.value as T;
  }

  /** Polls `expression` until it is truthy (no clock: a bound on the number of tries, each after a page task). */
  async waitFor(expression: string, tries = 20_000): Promise<void> {
    for (let i = 0; i < tries; i++) {
      if (await this.evaluate<boolean>(`Boolean(${expression})`)) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`never true in the page: ${expression}`);
  }

  async setInputFiles(selector: string, files: readonly string[]): Promise<void> {
    const { root } = (await this.send('DOM.getDocument', { depth: 0 })) as { root: { nodeId: number } };
    const { nodeId } = (await this.send('DOM.querySelector', { nodeId: root.nodeId, selector })) as {
      nodeId: number;
    };
    if (nodeId === 0) throw new Error(`no element ${selector}`);
    await this.send('DOM.setFileInputFiles', { nodeId, files });
  }

  /** Drags files from outside the browser and drops them on the centre of the element `selector`. */
  async dropFiles(selector: string, files: readonly string[]): Promise<void> {
    const box = await this.evaluate<{ x: number; y: number } | null>(
      `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return null; e.scrollIntoView();
        const r = e.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`,
    );
    if (box === null) throw new Error(`no element ${selector}`);
    const data = { items: [], files, dragOperationsMask: 1 };
    for (const type of ['dragEnter', 'dragOver', 'drop']) {
      await this.send('Input.dispatchDragEvent', { type, x: box.x, y: box.y, data });
    }
  }

  /** Presses one key (Tab, Enter, Space, or a character) as a keyboard would. */
  async press(key: 'Tab' | 'Enter' | ' ', shift = false): Promise<void> {
    const codes = { Tab: [9, 'Tab'], Enter: [13, 'Enter'], ' ': [32, 'Space'] } as const;
    const [vk, code] = codes[key];
    const common = {
      key,
      code,
      windowsVirtualKeyCode: vk,
      nativeVirtualKeyCode: vk,
      modifiers: shift ? 8 : 0,
      ...(key === 'Enter' ? { text: '\r' } : key === ' ' ? { text: ' ' } : {}),
    };
    await this.send('Input.dispatchKeyEvent', { type: 'keyDown', ...common });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...common });
  }

  /** Types text into the focused element. */
  async insertText(text: string): Promise<void> {
    await this.send('Input.insertText', { text });
  }

  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
    })) as {
      data: string;
    };
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    await this.browser.send('Target.closeTarget', { targetId: this.targetId });
  }
}
