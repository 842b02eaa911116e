def running_total(numbers):
    totals = []
    total = 0
    for number in numbers:
        total += number
        totals.append(total)
    return totals


def first_over(numbers, threshold):
    for position, total in enumerate(running_total(numbers)):
        if total > threshold:
            return position
    raise ValueError("total never exceeds threshold")
