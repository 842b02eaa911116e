def running_total(numbers):
    pass


def first_over(numbers, threshold):
    pass
