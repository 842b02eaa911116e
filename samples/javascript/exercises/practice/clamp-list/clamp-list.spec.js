import { clampList } from './clamp-list';

describe('Clamp List', () => {
  test('empty list stays empty', () => {
    expect(clampList([], 0, 10)).toEqual([]);
  });

  xtest('values inside the range are unchanged', () => {
    expect(clampList([1, 5, 9], 0, 10)).toEqual([1, 5, 9]);
  });

  xtest('values below the range are raised to low', () => {
    expect(clampList([-3, 2], 0, 10)).toEqual([0, 2]);
  });

  xit('values above the range are lowered to high', () => {
    expect(clampList([7, 12, 100], 0, 10)).toEqual([7, 10, 10]);
  });

  xtest('the input list is not changed', () => {
    const values = [-1, 11];
    expect(clampList(values, 0, 10)).toEqual([0, 10]);
    expect(values).toEqual([-1, 11]);
  });

  xtest('low greater than high is an error', () => {
    expect(() => clampList([1], 5, 4)).toThrow(
      new Error('low must not exceed high'),
    );
  });
});
