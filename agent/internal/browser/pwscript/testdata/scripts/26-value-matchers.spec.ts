// expect: pass
import { test, expect } from '@playwright/test';

class Point { constructor(public x: number, public y: number) {} }

test('synchronous matchers', async () => {
  expect(1 + 1).toBe(2);
  expect({ a: 1, b: [1, 2], c: undefined }).toEqual({ a: 1, b: [1, 2] });
  expect({ a: 1, b: [1, 2] }).toStrictEqual({ a: 1, b: [1, 2] });
  expect(new Point(1, 2)).toEqual({ x: 1, y: 2 });
  expect(new Point(1, 2)).not.toStrictEqual({ x: 1, y: 2 });
  expect([1, 2, 3]).toContain(2);
  expect('hello world').toContain('world');
  expect([{ a: 1 }, { b: 2 }]).toContainEqual({ b: 2 });
  expect('Vantage').toMatch(/^van/i);
  expect('Vantage').toMatch('tag');
  expect([1, 2, 3]).toHaveLength(3);
  expect('abc').toHaveLength(3);
  expect({ a: { b: [10, 20] } }).toHaveProperty('a.b[1]', 20);
  expect({ a: { b: 1 } }).toHaveProperty(['a', 'b']);
  expect({ a: 1, b: 2 }).toMatchObject({ a: 1 });
  expect(3).toBeGreaterThan(2);
  expect(3).toBeGreaterThanOrEqual(3);
  expect(2).toBeLessThan(3);
  expect(2).toBeLessThanOrEqual(2);
  expect(0.1 + 0.2).toBeCloseTo(0.3);
  expect(NaN).toBeNaN();
  expect(null).toBeNull();
  expect(undefined).toBeUndefined();
  expect(0).toBeDefined();
  expect('x').toBeTruthy();
  expect('').toBeFalsy();
  expect(new Point(0, 0)).toBeInstanceOf(Point);
  expect(() => { throw new TypeError('bad input'); }).toThrow('bad input');
  expect(() => { throw new TypeError('bad input'); }).toThrow(TypeError);
  expect(() => { throw new Error('code 42'); }).toThrow(/\d+/);
  expect(() => 1).not.toThrow();
  expect(new Map([['a', 1]])).toEqual(new Map([['a', 1]]));
  expect(new Set([1, 2])).not.toEqual(new Set([1, 3]));
  expect(-0).not.toBe(0);
  expect(1).not.toEqual(2);
  const maybe: { deep?: { value?: number } } = { deep: {} };
  expect(maybe.deep?.value ?? 7).toBe(7);
});
