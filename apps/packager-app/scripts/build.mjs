#!/usr/bin/env node
// Builds packager.oapp with the repository's own command line (apps/cli/dist/main.js): compile the workflow with
// its scripts, sign it with the three release keys (app, packager-app and the version lock packager-<major>.x) and
// encrypt it for its recipients. Writes OUT/packager.oapp and OUT/packager.oapp.hash (the workflow hash of the
// packaged content: the same for every build of one commit, whatever the keys). With no release keys given it
// makes throw-away keys in OUT/keys/ and OUT/packager.bootstrap.json, a bootstrap the agent starts on as it is:
//   node apps/agent-runtime/dist/main.js apps/packager-app/dist/packager.bootstrap.json
// Options and variables: apps/packager-app/README.md ("Build").
// First it writes resources/packager/inspect-page.js (not in git): the script of the GET and HEAD /inspect steps,
// which answers the inspection page of @org/inspect-page with the bytes and headers apps/packager-api sends.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const APP = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(APP, '..', '..');
const CLI = join(ROOT, 'apps', 'cli', 'dist', 'main.js');
const WORKFLOW = join(APP, 'packager.workflow.json');
const SCRIPTS = join(APP, 'resources');
/** The generated script of the /inspect steps (see {@link writeInspectPageScript}). */
const INSPECT_PAGE_SCRIPT = join(SCRIPTS, 'packager', 'inspect-page.js');
const PACKAGE_ID = 'packager';
const PORT = 39575;
/** The Express service's resource directories (apps/packager-api/src/config.ts DEFAULT_RESOURCE_DIRS). */
const SEED_RESOURCE_DIRS = ['/community-resources', '/local-resources1', '/local-resources2'];
/**
 * Outside the container the Express service, started from the repository root (scripts/start-packager.sh), uses
 * `./resources` when /community-resources is missing (FALLBACK_RESOURCE_DIR), creating it: the same directory here.
 */
const LOCAL_COMMUNITY_DIR = join(ROOT, 'resources');

/** Release keys: variable → what it holds (each a key file path or env://NAME, as the oapp command line takes). */
const KEY_VARIABLES = {
  PACKAGER_APP_IDENTITY: 'the packager identity (authenticated secret key)',
  PACKAGER_APP_SIGNING_KEY: 'the app signing key "app" (sign secret key)',
  PACKAGER_APP_KEY: 'the packager-app signing key "packager-app" (sign secret key)',
  PACKAGER_APP_LOCK_KEY: 'the version-lock key "packager-<major>.x" (sign secret key)',
  PACKAGER_APP_RECIPIENTS: 'recipients (authenticated public keys), comma-separated',
};

const USAGE = `usage: node scripts/build.mjs [--out DIR] [--package-path PATH] [--resource-dirs DIR,DIR,...] [--bind ADDRESS]

  --out DIR             where packager.oapp, packager.oapp.hash, keys/ and the bootstrap go (default: dist)
  --package-path PATH   remoteConfiguration written into the bootstrap (default: the absolute path of DIR/packager.oapp)
  --resource-dirs LIST  the bootstrap's resource directories, in search order; the first is required
                        (default: ${LOCAL_COMMUNITY_DIR} (created if missing),${SEED_RESOURCE_DIRS.slice(1).join(',')})
  --bind ADDRESS        bindAddress of the API listener in the bootstrap (default: none, the agent's 127.0.0.1)

Release keys (all or none; each a key file or env://NAME):
${Object.entries(KEY_VARIABLES)
  .map(([k, v]) => `  ${k.padEnd(25)} ${v}`)
  .join('\n')}
  PACKAGER_APP_SIGN_TEXT    text every signature covers (default: "packager <version>")
Without them: throw-away keys in DIR/keys/ and DIR/packager.bootstrap.json.`;

function fail(message, code = 1) {
  process.stderr.write(`packager-app build: ${message}\n`);
  process.exit(code);
}

/** Runs the oapp command line; its stderr goes to ours, its stdout is returned. Exits with its status on failure. */
function oapp(args) {
  try {
    return execFileSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (err) {
    fail(
      `oapp ${args[0]} failed (exit ${err.status ?? err.signal})`,
      typeof err.status === 'number' ? err.status : 1,
    );
  }
}

let options;
try {
  options = parseArgs({
    options: {
      out: { type: 'string', default: 'dist' },
      'package-path': { type: 'string' },
      'resource-dirs': { type: 'string' },
      bind: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }).values;
} catch (err) {
  fail(`${err.message}\n${USAGE}`, 2);
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!existsSync(CLI))
  fail(`${CLI} is missing: build the command line first (pnpm --filter @org/cli... build)`);

const version = JSON.parse(readFileSync(join(APP, 'package.json'), 'utf8')).version;
const major = /^(\d+)\./.exec(version)?.[1];
if (major === undefined) fail(`package.json version "${version}" has no major number`);
/** The version-lock signer: it signs the releases of one major version only (README "Release signing"). */
const LOCK_ID = `packager-${major}.x`;
const SIGNER_IDS = ['app', 'packager-app', LOCK_ID];
const signText = process.env.PACKAGER_APP_SIGN_TEXT || `packager ${version}`;

await writeInspectPageScript();

const out = resolve(options.out);
mkdirSync(out, { recursive: true });
const oappPath = join(out, 'packager.oapp');
const hashPath = join(out, 'packager.oapp.hash');
const bootstrapPath = join(out, 'packager.bootstrap.json');

const given = Object.keys(KEY_VARIABLES).filter((k) => (process.env[k] ?? '') !== '');
let keys;
if (given.length > 0) {
  const missing = Object.keys(KEY_VARIABLES).filter((k) => !given.includes(k));
  if (missing.length > 0) fail(`release keys are all or none: ${missing.join(', ')} not set`, 2);
  keys = releaseKeys();
} else {
  keys = throwAwayKeys();
}

const args = [
  'package',
  WORKFLOW,
  '-o',
  oappPath,
  '--package-id',
  PACKAGE_ID,
  '--resource-dir',
  SCRIPTS,
  '--packager-key',
  keys.identity,
  ...keys.recipients.flatMap((r) => ['--recipient', r]),
  ...keys.signers.flatMap((s) => ['--signer', s]),
  '--sign-text',
  signText,
  '--json',
];
// Replaced whole: a package left by an earlier build is never mistaken for this one.
rmSync(oappPath, { force: true });
const summary = JSON.parse(oapp(args));
const hash = summary.workflowHash;
if (!/^[0-9a-f]{64}$/.test(hash ?? '')) fail('oapp package reported no workflow hash');
writeFileSync(hashPath, `${hash}\n`);

if (keys.throwAway) writeBootstrap(keys);
const rel = (p) => (p.startsWith(`${process.cwd()}/`) ? p.slice(process.cwd().length + 1) : p);
console.log(
  `packager-app: ${rel(oappPath)}: package "${PACKAGE_ID}" ${version}, signed by ${SIGNER_IDS.join(', ')}, ${summary.bytes} bytes`,
);
console.log(`packager-app: workflow hash ${hash} (${rel(hashPath)})`);
if (keys.throwAway) {
  console.log(`packager-app: throw-away keys in ${rel(join(out, 'keys'))}/, bootstrap ${rel(bootstrapPath)}`);
} else {
  console.log('packager-app: release keys from the environment; no bootstrap written');
}

/** Keys named by the PACKAGER_APP_* variables; the lock key's record, when it has an id, must be this major's. */
function releaseKeys() {
  const lock = process.env.PACKAGER_APP_LOCK_KEY;
  const id = recordId(lock);
  if (id !== undefined && id !== LOCK_ID) {
    fail(`PACKAGER_APP_LOCK_KEY is the key "${id}": version ${version} is signed only by "${LOCK_ID}"`, 2);
  }
  const recipients = process.env.PACKAGER_APP_RECIPIENTS.split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  if (recipients.length === 0) fail('PACKAGER_APP_RECIPIENTS names no key', 2);
  return {
    throwAway: false,
    identity: process.env.PACKAGER_APP_IDENTITY,
    recipients,
    signers: [process.env.PACKAGER_APP_SIGNING_KEY, process.env.PACKAGER_APP_KEY, lock],
  };
}

/** The `id` of a key record given as a file or env://NAME, if it is one (other forms carry no id). */
function recordId(src) {
  let text;
  try {
    text = src.startsWith('env://') ? process.env[src.slice('env://'.length)] : readFileSync(src, 'utf8');
  } catch {
    return undefined; // the command line reports an unreadable source itself
  }
  try {
    const id = JSON.parse(text ?? '').id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Fresh keys in OUT/keys/ (secret files 0600 in a 0700 directory), made with oapp keygen. */
function throwAwayKeys() {
  const dir = join(out, 'keys');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o700 });
  const make = (id, purpose) => {
    const file = join(dir, `${id}.key`);
    oapp(['keygen', '--purpose', purpose, '--id', id, '-o', file, '--public-out', join(dir, `${id}.pub`)]);
    if ((statSync(file).mode & 0o077) !== 0) fail(`${file} is readable by others`);
    return file;
  };
  const identity = make('packager-identity', 'authenticated');
  const deployment = make('packager-deployment', 'authenticated');
  const signers = SIGNER_IDS.map((id) => make(id, 'sign'));
  return {
    throwAway: true,
    dir,
    identity,
    deployment,
    recipients: [deployment.replace(/\.key$/, '.pub')],
    signers,
  };
}

/** The resource directories of the bootstrap: the option, else the repository's resources/ and the seed's others. */
function resourceDirs() {
  if (options['resource-dirs'] !== undefined) {
    const dirs = options['resource-dirs']
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '');
    if (dirs.length === 0) fail('--resource-dirs names no directory', 2);
    return dirs;
  }
  mkdirSync(LOCAL_COMMUNITY_DIR, { recursive: true });
  return [LOCAL_COMMUNITY_DIR, ...SEED_RESOURCE_DIRS.slice(1)];
}

/**
 * OUT/packager.bootstrap.json (mode 0600: it holds the deployment's secret key, which opens the package): one
 * record "packager" that pins the package id, the packager identity and the three signers, grants the packager
 * capability, the API listener on 39575 and read access to the resource directories (data.resourceIds, in order).
 */
function writeBootstrap(k) {
  const record = (id) => JSON.parse(readFileSync(join(k.dir, id), 'utf8'));
  const ids = ['community-resources', 'local-resources1', 'local-resources2'];
  const dirs = resourceDirs();
  const fileAccess = dirs.map((dir, i) => ({
    id: ids[i] ?? `local-resources${i}`,
    directoryOrFile: dir,
    READ: true,
    LIST: true,
  }));
  const bootstrap = [
    {
      deploymentId: 'packager',
      remoteConfiguration: options['package-path'] ?? oappPath,
      packaging: {
        packageId: PACKAGE_ID,
        packagerIdentities: ['packager-identity'],
        requiredSigners: SIGNER_IDS.map((id) => ({ id })),
      },
      keys: [
        record('packager-identity.pub'),
        record('packager-deployment.key'),
        ...SIGNER_IDS.map((id) => record(`${id}.pub`)),
      ],
      allowPackagerAccess: true,
      allowHttpServerAccess: [
        { id: 'api', port: PORT, ...(options.bind === undefined ? {} : { bindAddress: options.bind }) },
      ],
      allowFileAccess: fileAccess,
      data: { resourceIds: fileAccess.map((f) => f.id) },
    },
  ];
  rmSync(bootstrapPath, { force: true });
  writeFileSync(bootstrapPath, `${JSON.stringify(bootstrap, null, 2)}\n`, { mode: 0o600 });
  chmodSync(bootstrapPath, 0o600);
}

/**
 * resources/packager/inspect-page.js: the script of the GET and HEAD /inspect steps. It holds the page's bytes
 * (dist/inspect.html of @org/inspect-page, as UTF-8 text) and the headers `inspectPageAnswer` gives the Express
 * service (its Content-Security-Policy, nosniff, X-Frame-Options, Referrer-Policy, the cross-origin policies,
 * Cache-Control and the ETag; the agent sets Content-Length itself), and answers 304 to a matching If-None-Match,
 * as `serveInspectPage` does. Written whole and renamed into place, so a build running beside another never
 * reads half a file; the same page gives the same bytes, so the package's workflow hash follows the page.
 */
async function writeInspectPageScript() {
  let page;
  try {
    page = await import('@org/inspect-page');
  } catch (err) {
    fail(
      `@org/inspect-page cannot be loaded (${err.code ?? err.message}): build it first (pnpm --filter @org/packager-app... build)`,
    );
  }
  const answer = page.inspectPageAnswer('GET');
  const html = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  const headers = Object.fromEntries(
    Object.entries(answer.headers).filter(([name]) => name.toLowerCase() !== 'content-length'),
  );
  const script = `// Generated by apps/packager-app/scripts/build.mjs from @org/inspect-page: do not edit (not in git).
// GET and HEAD /inspect: the inspection page (docs/adr/0146), with the headers apps/packager-api sends it; 304 when
// If-None-Match names its ETag. The agent sends no body to HEAD and sets Content-Length itself.
var HEADERS = ${JSON.stringify(headers)};
var ifNoneMatch = context.getHeader('If-None-Match');
var tags = ifNoneMatch === null ? [] : JSON.parse(ifNoneMatch).join(',').split(',');
var matches = tags.some(function (t) {
  return t.trim() === HEADERS.ETag || t.trim() === '*';
});
Object.keys(HEADERS).forEach(function (name) {
  context.setHeader(name, HEADERS[name]);
});
if (matches) context.setProperty('status_code', '304');
else context.setBody(${JSON.stringify(html)});
`;
  const tmp = `${INSPECT_PAGE_SCRIPT}.${process.pid}.tmp`;
  writeFileSync(tmp, script);
  renameSync(tmp, INSPECT_PAGE_SCRIPT);
}
