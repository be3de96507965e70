import { describe, expect, it } from 'vitest';
import { PROGRESS_MIN_BYTES, renderProgress, wantsProgress } from '../src/progress.js';

describe('wantsProgress', () => {
  it('only on a terminal and only for inputs of 64 MiB or more', () => {
    expect(PROGRESS_MIN_BYTES).toBe(64 * 1024 * 1024);
    expect(wantsProgress(true, PROGRESS_MIN_BYTES)).toBe(true);
    expect(wantsProgress(true, PROGRESS_MIN_BYTES - 1)).toBe(false);
    expect(wantsProgress(false, PROGRESS_MIN_BYTES * 4)).toBe(false);
    expect(wantsProgress(undefined, PROGRESS_MIN_BYTES * 4)).toBe(false);
    expect(wantsProgress(true, undefined)).toBe(false);
  });

  it('renders a bar with percent and MiB', () => {
    const MiB = 1024 * 1024;
    expect(renderProgress('decrypting', 32 * MiB, 128 * MiB, 8)).toBe(
      'decrypting [##------]  25%  32/128 MiB',
    );
  });
});
