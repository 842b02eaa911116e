use anyhow::{anyhow, Result};
use num_traits::{CheckedAdd, Zero};

/// Adds up `values` with checked arithmetic, for any type that supports it.
fn sum_all<T: CheckedAdd + Zero>(values: &[T]) -> Option<T> {
    values
        .iter()
        .try_fold(T::zero(), |total, value| CheckedAdd::checked_add(&total, value))
}

pub fn checked_sum(values: &[i32]) -> Result<i32> {
    sum_all(values).ok_or_else(|| anyhow!("sum overflowed"))
}
