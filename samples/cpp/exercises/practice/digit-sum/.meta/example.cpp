#include "digit_sum.h"

namespace digit_sum {

int sum(long long n) {
    // Work with non-positive values so that the most negative long long
    // never has to be negated.
    if (n > 0) {
        n = -n;
    }
    int total = 0;
    while (n != 0) {
        total += static_cast<int>(-(n % 10));
        n /= 10;
    }
    return total;
}

int digital_root(long long n) {
    int root = sum(n);
    while (root >= 10) {
        root = sum(root);
    }
    return root;
}

}  // namespace digit_sum
