#include "sim/pipeline/sample_size.hpp"

#include <cmath>
#include <numeric>
#include <sstream>

namespace mlsim {

SampleSizeDistribution SampleSizeDistribution::constant(Bytes size) {
  SampleSizeDistribution d;
  d.mean_ = size;
  return d;
}

SampleSizeDistribution SampleSizeDistribution::parse(const ConfigNode& node) {
  if (node.is_scalar())
    return constant(node.as_quantity<Bytes>());
  node.allow_only({"distribution", "size", "mean", "stddev", "bins", "file"});
  SampleSizeDistribution d;
  d.kind_ = node.get_choice("distribution", {"constant", "normal", "lognormal", "histogram"}, "constant");
  if (d.kind_ == "constant") {
    d.mean_ = node.has("size") ? node.get_quantity<Bytes>("size") : node.get_quantity<Bytes>("mean");
  } else if (d.kind_ == "normal" || d.kind_ == "lognormal") {
    d.mean_ = node.get_quantity<Bytes>("mean");
    d.stddev_ = node.get_quantity<Bytes>("stddev", Bytes(0.0), false);
  } else {
    std::vector<std::pair<std::string, ConfigNode>> rows;
    if (node.has("bins")) {
      for (const auto& bin : node.child("bins").items()) {
        auto cells = bin.items();
        if (cells.size() != 2)
          bin.fail("a [size, weight] pair", bin.quoted());
        d.bin_sizes_.push_back(cells[0].as_quantity<Bytes>().value());
        double w = cells[1].as_number();
        if (w < 0)
          cells[1].fail("a weight >= 0", cells[1].quoted());
        d.bin_weights_.push_back(w);
      }
    } else {
      ConfigNode f = node.required("file");
      std::istringstream in(f.read_referenced_file()); // a regular file under the input size limit
      std::string line;
      int lineno = 0;
      while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#' || !std::isdigit(static_cast<unsigned char>(line[0])))
          continue;
        double size = 0, weight = 0;
        char comma = 0;
        std::istringstream ls(line);
        if (!(ls >> size >> comma >> weight) || comma != ',' || size <= 0 || weight < 0)
          throw InputError(f.as_string() + ":" + std::to_string(lineno), "", "'bytes,weight' with bytes > 0",
                           "'" + line + "'");
        d.bin_sizes_.push_back(size);
        d.bin_weights_.push_back(weight);
      }
    }
    double total = std::accumulate(d.bin_weights_.begin(), d.bin_weights_.end(), 0.0);
    if (d.bin_sizes_.empty() || total <= 0)
      node.fail("a histogram with at least one bin of positive weight", "none");
    double m = 0;
    for (size_t i = 0; i < d.bin_sizes_.size(); ++i)
      m += d.bin_sizes_[i] * d.bin_weights_[i] / total;
    d.mean_ = Bytes(m);
  }
  return d;
}

Bytes SampleSizeDistribution::draw(std::mt19937_64& rng) const {
  if (kind_ == "constant")
    return mean_;
  if (kind_ == "normal") {
    std::normal_distribution<double> n(mean_.value(), stddev_.value());
    return Bytes(std::max(1.0, std::round(n(rng))));
  }
  if (kind_ == "lognormal") {
    // Parameters of the underlying normal from the mean m and stddev s of the size.
    double m = mean_.value(), s = stddev_.value();
    double sigma2 = std::log(1.0 + (s * s) / (m * m));
    std::lognormal_distribution<double> ln(std::log(m) - sigma2 / 2.0, std::sqrt(sigma2));
    return Bytes(std::max(1.0, std::round(ln(rng))));
  }
  std::discrete_distribution<size_t> pick(bin_weights_.begin(), bin_weights_.end());
  return Bytes(bin_sizes_[pick(rng)]);
}

Bytes SampleSizeDistribution::mean() const { return mean_; }

} // namespace mlsim
