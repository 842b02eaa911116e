// Catch2 v2 single header, provided by the system (Debian package "catch2",
// installed as /usr/include/catch2/catch.hpp).
#pragma once
#include <catch2/catch.hpp>
