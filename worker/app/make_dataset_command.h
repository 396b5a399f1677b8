// `gantry-worker make-dataset`: packs a folder of pictures (PNG, JPEG, WebP; the
// content decides, not the name) into one packed image set that training ranks read
// by index without decoding (worker/data/pack_image_folder.h does the work,
// worker/data/packed_images_format.h has the layout, docs/images.md the guide).
//
// Exit codes: 0 written; 2 bad flags, a --from that is no folder, an --out that exists
// (never written over), a folder with no image to pack, or --strict with a file skipped
// (a problem of the input, which the user fixes: nothing is written); 1 a failure while
// writing (the disk full); 128 + the signal when stopped by SIGINT or SIGTERM. In every
// case but 0 the temporary file is removed and nothing of the user's is touched.
#pragma once

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "worker/app/number_flags.h"
#include "worker/data/pack_image_folder.h"

namespace gantry {

class MakeDatasetCommand {
 public:
  explicit MakeDatasetCommand(CLI::App& app);

  bool selected() const { return command_->parsed(); }
  int Run();

 private:
  CLI::App* command_;
  std::unique_ptr<NumberFlags> numbers_;
  PackRequest request_;
  double progress_seconds_ = 5;
};

}  // namespace gantry
