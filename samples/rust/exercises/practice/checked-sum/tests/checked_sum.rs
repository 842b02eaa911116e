use checked_sum::checked_sum;

#[test]
fn empty_slice_sums_to_zero() {
    assert_eq!(checked_sum(&[]).unwrap(), 0);
}

#[test]
#[ignore]
fn several_values() {
    assert_eq!(checked_sum(&[4, 8, 15, 16, 23, 42]).unwrap(), 108);
}

#[test]
#[ignore]
fn negative_values() {
    assert_eq!(checked_sum(&[10, -25, 5]).unwrap(), -10);
}

#[test]
#[ignore]
fn largest_sum_that_fits() {
    assert_eq!(checked_sum(&[i32::MAX - 1, 1]).unwrap(), i32::MAX);
}

#[test]
#[ignore]
fn overflow_is_an_error() {
    let error = checked_sum(&[i32::MAX, 1]).unwrap_err();
    assert_eq!(error.to_string(), "sum overflowed");
}

#[test]
#[ignore]
fn underflow_is_an_error() {
    let error = checked_sum(&[i32::MIN, 3, -4]).unwrap_err();
    assert_eq!(error.to_string(), "sum overflowed");
}
