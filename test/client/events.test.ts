import { describe, expect, it, vi } from 'vitest';
import { Emitter } from '../../src/shared/events.js';

interface E {
  a: { n: number };
  b: string;
}

describe('Emitter', () => {
  it('delivers typed events and returns a disposer', () => {
    const e = new Emitter<E>();
    const seen: number[] = [];
    const dispose = e.on('a', (x) => seen.push(x.n));
    expect(e.has('a')).toBe(true);
    expect(e.has('b')).toBe(false);
    e.emit('a', { n: 1 });
    dispose();
    dispose();
    e.emit('a', { n: 2 });
    expect(seen).toEqual([1]);
    expect(e.has('a')).toBe(false);
  });

  it('off removes one listener; a listener removed during emit does not break it', () => {
    const e = new Emitter<E>();
    const calls: string[] = [];
    const second = () => calls.push('second');
    e.on('b', () => {
      calls.push('first');
      e.off('b', second);
    });
    e.on('b', second);
    e.emit('b', 'x');
    e.emit('b', 'y');
    expect(calls).toEqual(['first', 'second', 'first']);
  });

  it('takes any name from JavaScript callers, __proto__ included, without touching a prototype', () => {
    const e = new Emitter<Record<string, number>>();
    const seen: number[] = [];
    e.on('__proto__', (n) => seen.push(n));
    e.emit('__proto__', 1);
    expect(seen).toEqual([1]);
    expect(e.has('constructor')).toBe(false);
    expect(Object.prototype).not.toHaveProperty('length');
  });

  it("a throwing listener's error goes to onListenerError when given, and the others still run", () => {
    const heard: [unknown, keyof E][] = [];
    const e = new Emitter<E>((error, name) => heard.push([error, name]));
    const spy = vi.fn();
    const boom = new Error('boom');
    e.on('b', () => {
      throw boom;
    });
    e.on('b', spy);
    e.emit('b', 'x');
    expect(heard).toEqual([[boom, 'b']]);
    expect(spy).toHaveBeenCalledWith('x');
  });

  it('a throwing listener does not stop the others and surfaces as an uncaught error', async () => {
    const e = new Emitter<E>();
    const spy = vi.fn();
    const errors: unknown[] = [];
    const original = globalThis.queueMicrotask;
    globalThis.queueMicrotask = (cb) =>
      original(() => {
        try {
          cb();
        } catch (err) {
          errors.push(err);
        }
      });
    try {
      e.on('b', () => {
        throw new Error('boom');
      });
      e.on('b', spy);
      e.emit('b', 'x');
      await Promise.resolve();
      await Promise.resolve();
    } finally {
      globalThis.queueMicrotask = original;
    }
    expect(spy).toHaveBeenCalledWith('x');
    expect(errors).toHaveLength(1);
  });
});
