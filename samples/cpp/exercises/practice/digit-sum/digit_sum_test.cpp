#include "digit_sum.h"
#ifdef EXERCISM_TEST_SUITE
#include <catch2/catch.hpp>
#else
#include "test/catch.hpp"
#endif

TEST_CASE("digit sum of zero is zero") {
    REQUIRE(digit_sum::sum(0) == 0);
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("digit sum of a single digit is that digit") {
    REQUIRE(digit_sum::sum(7) == 7);
}

TEST_CASE("digit sum of several digits") {
    REQUIRE(digit_sum::sum(907) == 16);
}

TEST_CASE("digit sum ignores the sign") {
    REQUIRE(digit_sum::sum(-907) == 16);
}

TEST_CASE("digit sum of the smallest long long") {
    REQUIRE(digit_sum::sum(-9223372036854775807LL - 1) == 89);
}

TEST_CASE("digital root repeats until one digit is left") {
    REQUIRE(digit_sum::digital_root(9875) == 2);
}

TEST_CASE("digital root of a single digit is that digit") {
    REQUIRE(digit_sum::digital_root(-4) == 4);
}
#endif
