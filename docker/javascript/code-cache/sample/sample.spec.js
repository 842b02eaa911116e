import { Ledger, LedgerError, histogram, grid, transpose } from './sample';

describe('Ledger', () => {
  test('adds', () => {
    expect(Ledger.of(1, 2, 3).total).toBe(6);
  });

  test('chains', () => {
    expect(Ledger.of(4, 5).add(1).total).toEqual(10);
  });

  test('refuses', () => {
    expect(() => new Ledger().add(NaN)).toThrow(RangeError);
    expect(() => new Ledger().add(Infinity)).toThrow('not an amount');
  });

  test('settles', async () => {
    await expect(Ledger.of(1, 1).settle()).resolves.toEqual({ total: 2, count: 2 });
  });

  test('errors', () => {
    expect(new LedgerError('x')).toBeInstanceOf(Error);
  });
});

describe('helpers', () => {
  test('histogram', () => {
    expect(histogram('a b a')).toStrictEqual({ a: 2, b: 1 });
  });

  test('grid', () => {
    expect(grid(2, 2)).toEqual([[0, 1], [2, 3]]);
    expect(grid(1, 3)[0]).toContain(2);
    expect(grid(0, 1)).toHaveLength(0);
  });

  xtest('transpose', () => {
    expect(transpose(['ab', 'c'])).toEqual(['ac', 'b']);
    expect(transpose([])).not.toBeNull();
  });
});

describe('a failure', () => {
  test('is reported', () => {
    expect(transpose(['ab'])).toEqual(['b', 'a']);
  });
});
