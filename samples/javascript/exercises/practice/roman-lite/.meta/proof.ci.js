const ONES = ['', 'I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX'];

export const toRoman = (number) => {
  if (!Number.isInteger(number) || number < 1 || number > 39) {
    throw new Error('number out of range');
  }
  return 'X'.repeat(Math.floor(number / 10)) + ONES[number % 10];
};
