#pragma once
// Which machine a rank runs on, as messages name it: its host name and its IPv4 addresses (nodes
// of one machine share a host name but not their addresses).
#include <string>
#include <vector>

namespace attn::dist {

// The IPv4 addresses of this host's interfaces that are up, loopback left out, sorted.
std::vector<std::string> ipv4_addresses();
std::string host_name();
// "vm: 10.213.0.2" ("vm" alone without addresses): this host's, or another's from its parts.
std::string host_description();
std::string host_description(const std::string& name, const std::vector<std::string>& addresses);

}  // namespace attn::dist
