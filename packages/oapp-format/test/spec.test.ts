import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeHex } from '@org/envelope-crypto';
import { openPackage } from '../src/index.js';
import { decodeHeader, decodeStatement } from '../src/internal.js';
import { END, START, renderWorkedExample } from '../testdata/worked-example.js';
import { deployment } from './fixtures.js';
import { trusted, vendorPackager, vendorSigner, reviewerA, reviewerB, reviewerC } from './fixtures.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const spec = readFileSync(join(root, 'SPEC.md'), 'utf8');
const vector = new Uint8Array(readFileSync(join(root, 'testdata', 'vectors', 'v2-app-minimal.oapp')));
const example = spec.slice(spec.indexOf(START) + START.length, spec.indexOf(END)).trim();

describe('SPEC.md §12 worked example', () => {
  it('is the text the generator renders from testdata/vectors/v2-app-minimal.oapp', () => {
    expect(example).toBe(renderWorkedExample(vector).trim());
  });

  it('its frame and section hex and JSON reassemble into the vector, which opens as described', async () => {
    const hexBlocks = [...example.matchAll(/```hex\n([0-9a-f\n]+)```/g)].map((m) => m[1]!.replace(/\n/g, ''));
    const json = [...example.matchAll(/```json\n(.+)\n```/g)].map((m) => m[1]!);
    const headers = [...example.matchAll(/section header `([0-9a-f]{10})`/g)].map((m) => m[1]!);
    expect(hexBlocks).toHaveLength(4);
    expect(json).toHaveLength(2);
    expect(headers).toHaveLength(5);
    const te = new TextEncoder();
    const [frame, recipients, signatures, payload] = hexBlocks.map((h) => decodeHex(h));
    const parts = [
      frame!,
      decodeHex(headers[0]!),
      te.encode(json[0]),
      decodeHex(headers[1]!),
      te.encode(json[1]),
      decodeHex(headers[2]!),
      recipients!,
      decodeHex(headers[3]!),
      signatures!,
      decodeHex(headers[4]!),
      payload!,
    ];
    expect(Buffer.concat(parts).equals(Buffer.from(vector))).toBe(true);
    expect(decodeHeader(te.encode(json[0]), 2).packageId).toBe('hello-app');
    expect(decodeStatement(te.encode(json[1]), 2).content.size).toBe(16);
    const policy = {
      packageId: 'hello-app',
      packagerIdentities: [trusted(vendorPackager)],
      requiredSigners: [trusted(vendorSigner)],
      additionalSigners: [trusted(reviewerA), trusted(reviewerB), trusted(reviewerC)],
      requiredAdditionalSignerCount: 2,
    };
    const opened = await openPackage(vector, { policy, recipientSecretKey: deployment.secretKey });
    expect(new TextDecoder().decode(opened.content)).toBe('{"workflows":[]}');
  });
});
