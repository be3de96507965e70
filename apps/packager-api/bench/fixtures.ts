// Request bodies for the benchmark: fixed keys, a 10 KB workflow, 3 signers, 5 recipients.
import { generateKeyPair, keyToHex, type KeyPurpose } from '@org/envelope-crypto';

const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';

interface Spec {
  id: string;
  purpose: KeyPurpose;
  type: 'public' | 'secret';
  keyHex: string;
}

function pair(id: string, purpose: KeyPurpose): { pub: Spec; sec: Spec } {
  const p = generateKeyPair(purpose);
  return {
    pub: { id, purpose, type: 'public', keyHex: p.publicKey === null ? '' : keyToHex(p.publicKey) },
    sec: { id, purpose, type: 'secret', keyHex: keyToHex(p.secretKey) },
  };
}

/** A workflow of about `bytes` bytes of JSON: many steps with inline scripts. */
export function workflowOfSize(bytes: number): string {
  const steps: unknown[] = [];
  let text = '';
  for (let i = 0; text.length < bytes; i++) {
    steps.push({
      stepId: `step-${i}`,
      resultsProcessor: {
        script: `context.setBody(JSON.stringify({ step: ${i}, note: 'padding for the benchmark' }));`,
      },
    });
    text = JSON.stringify({ workflows: [{ name: 'bench', steps }] });
  }
  return text;
}

/** A multipart body with `body` (JSON text) and `stream` (a file part). */
export function multipart(body: unknown, stream: string): { contentType: string; payload: Buffer } {
  const payload = Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="body"\r\n\r\n${JSON.stringify(body)}\r\n`,
    ),
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="stream"; filename="s"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n${stream}\r\n--${BOUNDARY}--\r\n`,
    ),
  ]);
  return { contentType: `multipart/form-data; boundary=${BOUNDARY}`, payload };
}

/** A request as sent (`contentType`, `payload`) and the parts it was built from (for the crypto floor). */
export interface BenchRequest {
  contentType: string;
  payload: Buffer;
  body: { keys: Spec[]; encryptionKeys: string[]; packagerIdentityPrivateKey: string; packageId?: string };
  stream: string;
}

/** The `/string-encrypt` request: one recipient, a short secret. */
export function stringEncryptRequest(): BenchRequest {
  const packager = pair('packager', 'authenticated');
  const alice = pair('alice', 'authenticated');
  const body = {
    keys: [packager.sec, alice.pub],
    encryptionKeys: ['alice'],
    packagerIdentityPrivateKey: 'packager',
  };
  const stream = 'client-secret-0123456789';
  return { ...multipart(body, stream), body, stream };
}

/** The `/workflow-package` request: 10 KB workflow, 3 signers, 5 recipients. */
export function workflowPackageRequest(): BenchRequest & {
  body: { signers: { key: string; signText: string }[] };
} {
  const packager = pair('packager', 'authenticated');
  const recipients = [1, 2, 3, 4, 5].map((i) => pair(`r${i}`, 'authenticated'));
  const signers = [1, 2, 3].map((i) => pair(`s${i}`, 'sign'));
  const body = {
    packageId: 'bench',
    keys: [packager.sec, ...recipients.map((r) => r.pub), ...signers.map((s) => s.sec)],
    signers: signers.map((s, i) => ({ key: s.sec.id, signText: `signer ${i}` })),
    encryptionKeys: recipients.map((r) => r.pub.id),
    packagerIdentityPrivateKey: 'packager',
  };
  const stream = workflowOfSize(10 * 1024);
  return { ...multipart(body, stream), body, stream };
}
