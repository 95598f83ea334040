import { describe, expect, it } from 'vitest';
import { BodyBufferPool } from './body-buffers.ts';

describe('BodyBufferPool', () => {
  it('lends a view of the size asked, and lends a buffer given back again', () => {
    const pool = new BodyBufferPool();
    const first = pool.take(100_000);
    expect(first.length).toBe(100_000);
    expect(pool.lent).toBe(1);
    pool.give(first);
    expect(pool.lent).toBe(0);
    // A slightly larger body fits the same buffer (headroom).
    const second = pool.take(120_000);
    expect(second.buffer).toBe(first.buffer);
    expect(second.length).toBe(120_000);
    expect(pool.reused).toBe(1);
  });

  it('never lends one buffer to two requests at once', () => {
    const pool = new BodyBufferPool();
    const a = pool.take(50_000);
    const b = pool.take(50_000);
    expect(b.buffer).not.toBe(a.buffer);
    pool.give(a);
    expect(() => pool.give(a)).toThrow(/given back twice/);
    const c = pool.take(50_000);
    expect(c.buffer).toBe(a.buffer);
    expect(c.buffer).not.toBe(b.buffer);
  });

  it('lends the smallest idle buffer that fits, and a new one when none does', () => {
    const pool = new BodyBufferPool();
    const small = pool.take(20_000);
    const large = pool.take(400_000);
    pool.give(large);
    pool.give(small);
    expect(pool.take(10_000).buffer).toBe(small.buffer);
    const bigger = pool.take(600_000);
    expect(bigger.buffer).not.toBe(large.buffer);
    expect(pool.take(300_000).buffer).toBe(large.buffer);
  });

  it('keeps at most maxIdle idle buffers, dropping the smallest', () => {
    const pool = new BodyBufferPool({ maxIdle: 2 });
    const sizes = [300_000, 10_000, 200_000];
    const taken = sizes.map((n) => pool.take(n));
    for (const t of taken) pool.give(t);
    const stats = pool.idleStats();
    expect(stats.buffers).toBe(2);
    expect(stats.bytes).toBe((taken[0]!.buffer.byteLength + taken[2]!.buffer.byteLength) as number);
  });

  it('overwrites a buffer given back when poisonOnGive is set', () => {
    const pool = new BodyBufferPool({ poisonOnGive: true });
    const body = pool.take(1000);
    body.fill(0x41);
    pool.give(body);
    expect(body.every((b) => b === 0xee)).toBe(true);
    const plain = new BodyBufferPool();
    const kept = plain.take(1000);
    kept.fill(0x41);
    plain.give(kept);
    expect(kept.every((b) => b === 0x41)).toBe(true);
  });

  it('does not keep a buffer over maxKeptBytes', () => {
    const pool = new BodyBufferPool({ maxKeptBytes: 1024 * 1024 });
    const large = pool.take(2 * 1024 * 1024);
    const small = pool.take(100_000);
    pool.give(large);
    pool.give(small);
    expect(pool.lent).toBe(0);
    expect(pool.idleStats()).toEqual({ buffers: 1, bytes: small.buffer.byteLength });
    expect(pool.take(1_500_000).buffer).not.toBe(large.buffer);
  });
});
