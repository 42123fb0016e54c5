#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

TEST(Promotion, TableMatchesPyTorch) {
  EXPECT_EQ(promote_types(kByte, kChar), kShort);
  EXPECT_EQ(promote_types(kInt, kFloat), kFloat);
  EXPECT_EQ(promote_types(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promote_types(kBool, kLong), kLong);
  EXPECT_EQ(promote_types(kDouble, kHalf), kDouble);
}
