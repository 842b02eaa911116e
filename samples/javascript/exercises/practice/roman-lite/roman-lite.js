// Starting point for the 'Roman Lite' exercise: replace the body below.

export const toRoman = (number) => {
  throw new Error('Remove this line and implement the function');
};
