import unittest

from running_total import (
    first_over,
    running_total,
)


class RunningTotalTest(unittest.TestCase):
    def test_empty_list(self):
        self.assertEqual(running_total([]), [])

    def test_several_numbers(self):
        self.assertEqual(running_total([3, 1, 4, 1]), [3, 4, 8, 9])

    def test_negative_numbers(self):
        self.assertEqual(running_total([5, -2, -7, 10]), [5, 3, -4, 6])

    def test_input_list_is_not_changed(self):
        numbers = [2, 2, 2]
        self.assertEqual(running_total(numbers), [2, 4, 6])
        self.assertEqual(numbers, [2, 2, 2])

    def test_first_position_over_threshold(self):
        self.assertEqual(first_over([3, 1, 4, 1], 7), 2)

    def test_total_never_exceeds_threshold(self):
        with self.assertRaises(ValueError) as err:
            first_over([1, 2, 3], 6)
        self.assertEqual(type(err.exception), ValueError)
        self.assertEqual(err.exception.args[0], "total never exceeds threshold")
