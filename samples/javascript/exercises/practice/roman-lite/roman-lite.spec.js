import { toRoman } from './roman-lite';

test('1 is I', () => {
  expect(toRoman(1)).toEqual('I');
});

xtest('4 is IV', () => {
  expect(toRoman(4)).toEqual('IV');
});

xtest('9 is IX', () => {
  expect(toRoman(9)).toEqual('IX');
});

xtest('14 is XIV', () => {
  expect(toRoman(14)).toEqual('XIV');
});

xtest('39 is XXXIX', () => {
  expect(toRoman(39)).toEqual('XXXIX');
});

xtest('0 is out of range', () => {
  expect(() => toRoman(0)).toThrow(new Error('number out of range'));
});

xtest('40 is out of range', () => {
  expect(() => toRoman(40)).toThrow(new Error('number out of range'));
});
