export const clampList = (values, low, high) => {
  if (low > high) {
    throw new Error('low must not exceed high');
  }
  return values.map((value) => Math.min(high, Math.max(low, value)));
};
