// ASCII case, in a namespace of its own so a file takes it with `using ascii::lower;`.  The one
// definition of lower() (tests/guidelines_test.cc checks it), in model/text.cc with the other
// small text helpers of model/text.h.
#pragma once
#include <string>

namespace gpumap::ascii {

/// `s` with A-Z as a-z; every other byte (UTF-8 too) unchanged: for header names, filter keys,
/// column names and the like.
std::string lower(std::string s);

}  // namespace gpumap::ascii
