#include "train/dist/host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>

namespace attn::dist {

std::vector<std::string> ipv4_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
      continue;
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text))
      out.emplace_back(text);
  }
  freeifaddrs(list);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string host_description(const std::string& name, const std::vector<std::string>& addresses) {
  std::string text = name;
  for (std::size_t i = 0; i < addresses.size(); ++i) text += (i == 0 ? ": " : ", ") + addresses[i];
  return text;
}

std::string host_description() { return host_description(host_name(), ipv4_addresses()); }

}  // namespace attn::dist
