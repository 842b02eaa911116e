#if !defined(DIGIT_SUM_H)
#define DIGIT_SUM_H

namespace digit_sum {

int sum(long long n);

int digital_root(long long n);

}  // namespace digit_sum

#endif  // DIGIT_SUM_H
