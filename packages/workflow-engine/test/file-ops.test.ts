import { describe, expect, it } from 'vitest';
import { createWorkflowEngine, type FileEntry, type FileHost } from '../src/index.js';
import { codedError, fakeHost, input, scriptStep, workflow } from './fake-host.js';

interface Call {
  op: string;
  args: unknown[];
}

/** An in-memory FileHost that records every call; `refuse` names paths it refuses like the app does. */
function memoryFiles(refuse: string[] = []) {
  const calls: Call[] = [];
  const files = new Map<string, Uint8Array>();
  const check = (path: string) => {
    if (refuse.includes(path))
      throw codedError('AGENT_FILE_NOT_PERMITTED', `Not permitted (FC2): ${JSON.stringify(path)}`);
  };
  const host: FileHost = {
    read(id, path) {
      calls.push({ op: 'read', args: [id, path] });
      check(path);
      return Promise.resolve(new TextDecoder().decode(files.get(path) ?? new Uint8Array(0)));
    },
    write(id, path, data, offset) {
      calls.push({ op: 'write', args: [id, path, [...data], offset] });
      check(path);
      files.set(path, data);
      return Promise.resolve();
    },
    list(id, path) {
      calls.push({ op: 'list', args: [id, path] });
      const entries: FileEntry[] = [...files].map(([name, d]) => ({
        name,
        type: 'file',
        bytes: d.length,
        modified: 1,
      }));
      return Promise.resolve(entries);
    },
    move(id, from, to) {
      calls.push({ op: 'move', args: [id, from, to] });
      return Promise.resolve();
    },
    delete(id, path) {
      calls.push({ op: 'delete', args: [id, path] });
      return Promise.resolve();
    },
  };
  return { host, calls };
}

async function run(script: string, files: FileHost | undefined, extra: Record<string, unknown> = {}) {
  const host = fakeHost();
  host.files = files;
  const engine = await createWorkflowEngine(workflow([scriptStep('s', script, extra)]), { host, data: {} });
  const result = await engine.runStep('s', input('in'));
  engine.dispose();
  return result;
}

describe('context.files(id)', () => {
  it('passes every call to the host with its arguments and returns what the host returns', async () => {
    const m = memoryFiles();
    const result = await run(
      `const f = context.files('inbox');
       f.write('a.txt', 'héllo');
       f.writeBinary('b.bin', context.bytes().createFromByteArray([1, 2, 3]), 4);
       f.writeBinary('c.bin', [9]);
       f.move('a.txt', 'd.txt');
       f.delete('c.bin');
       context.setBody(f.read('a.txt') + '|' + f.list());`,
      m.host,
    );
    expect(result.errors).toEqual([]);
    expect(m.calls).toEqual([
      { op: 'write', args: ['inbox', 'a.txt', [104, 195, 169, 108, 108, 111], undefined] },
      { op: 'write', args: ['inbox', 'b.bin', [1, 2, 3], 4] },
      { op: 'write', args: ['inbox', 'c.bin', [9], undefined] },
      { op: 'move', args: ['inbox', 'a.txt', 'd.txt'] },
      { op: 'delete', args: ['inbox', 'c.bin'] },
      { op: 'read', args: ['inbox', 'a.txt'] },
      { op: 'list', args: ['inbox', ''] },
    ]);
    const [text, list] = String(result.body).split('|');
    expect(text).toBe('héllo');
    expect(JSON.parse(list!)).toEqual([
      { name: 'a.txt', type: 'file', bytes: 6, modified: 1 },
      { name: 'b.bin', type: 'file', bytes: 3, modified: 1 },
      { name: 'c.bin', type: 'file', bytes: 1, modified: 1 },
    ]);
  });

  it("a host refusal reaches the script as a coded error whose message says 'Not permitted'", async () => {
    const m = memoryFiles(['../x']);
    const result = await run(
      `try { context.files('inbox').read('../x'); } catch (e) { context.setBody(e.code + ' ' + e.message); }`,
      m.host,
    );
    expect(result.body).toBe(
      'AGENT_FILE_NOT_PERMITTED AGENT_FILE_NOT_PERMITTED: Not permitted (FC2): "../x"',
    );
  });

  it('without a file host every call is refused with ENGINE_NOT_PERMITTED', async () => {
    const result = await run(
      `try { context.files('inbox').read('a'); } catch (e) { context.setBody(e.code + ' ' + e.message); }`,
      undefined,
    );
    expect(result.body).toBe(
      'ENGINE_NOT_PERMITTED ENGINE_NOT_PERMITTED: Not permitted (FC2): this host grants no file access',
    );
  });

  it('an authentication context reads but never writes, moves or deletes', async () => {
    const m = memoryFiles();
    const result = await run(
      `const f = context.files('inbox'); const seen = [f.read('a')];
       for (const g of [() => f.write('a', 'x'), () => f.writeBinary('a', [1]), () => f.move('a', 'b'), () => f.delete('a')]) {
         try { g(); seen.push('written'); } catch (e) { seen.push(e.code); }
       }
       throw new Error(seen.join(','));`,
      m.host,
      { type: 'scripted-auth' },
    );
    expect(result.errors.join()).toContain(
      ',ENGINE_NOT_PERMITTED,ENGINE_NOT_PERMITTED,ENGINE_NOT_PERMITTED,ENGINE_NOT_PERMITTED',
    );
    expect(m.calls.map((c) => c.op)).toEqual(['read']);
  });

  it('refuses a negative or fractional writeBinary offset before the host is asked', async () => {
    const m = memoryFiles();
    const result = await run(
      `const seen = [];
       for (const off of [-1, 1.5]) { try { context.files('x').writeBinary('a', [1], off); } catch (e) { seen.push(e.message); } }
       context.setBody(seen.join('|'));`,
      m.host,
    );
    expect(result.body).toBe(
      'ENGINE_BAD_ARGUMENT: files: writeBinary off must be an integer ≥ 0, got -1|ENGINE_BAD_ARGUMENT: files: writeBinary off must be an integer ≥ 0, got 1.5',
    );
    expect(m.calls).toEqual([]);
  });
});
