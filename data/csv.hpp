#pragma once
// Delimited text tables as datasets: every column but one is a float feature, one column is the
// label (classification, a non-negative integer) or the target (regression). Errors are
// troupe::input_error naming the file and the 1-based line.
#include <string>

#include "data/dataset.hpp"

namespace troupe::data {

enum class csv_task { classification, regression };

struct csv_options {
  // Column holding the label/target; negative counts from the end (-1 = last column).
  int label_column = -1;
  bool header = false;  // skip the first non-blank line
  csv_task task = csv_task::classification;
  char delimiter = ',';
};

// sample_shape {columns - 1}; name = the file's stem. Blank lines are skipped; every other line
// must have the same number of fields. Classification sets classes = max label + 1.
dataset load_csv(const std::string& path, const csv_options& options = {});

}  // namespace troupe::data
