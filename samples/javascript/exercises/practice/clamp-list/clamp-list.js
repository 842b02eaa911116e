// Starting point for the 'Clamp List' exercise: replace the body below.

export const clampList = (values, low, high) => {
  throw new Error('Remove this line and implement the function');
};
