// A program that uses attn as a library: translates the lines of stdin with a model folder.
//   translate MODEL_DIR [BEAM] < input > output
// Built against an installed attn by examples/CMakeLists.txt (find_package) or by hand:
//   c++ translate.cpp $(pkg-config --cflags --libs attn) -o translate
#include <attn/attn.h>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: translate MODEL_DIR [BEAM] < input > output   (attn " << ATTN_VERSION << ")\n";
    return 2;
  }
  try {
    const attn::Model model(argv[1]);
    attn::TranslationOptions options;
    if (argc > 2) options.search.beam_size = std::stoi(argv[2]);
    attn::Translator translator(model, options);
    std::vector<std::string> lines;
    for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
    for (const attn::TranslationResult& result : translator.translate(lines)) std::cout << result.text << "\n";
    return 0;
  } catch (const attn::Error& e) {
    std::cerr << "translate: " << e.what() << "\n";
    return 1;
  }
}
