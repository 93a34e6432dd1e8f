#include "nodes/host/kernel/socket_stack.hpp"

#include <stdexcept>
#include <string>

#include "nodes/host/host.hpp"

namespace rdmasim {

SocketStack& socket_stack_of(Host& h, const char* what) {
  SocketStack* s = h.nic().fabric().sockets();
  if (!s)
    throw std::logic_error(std::string(what) + " needs a host network stack (fabric: tcp) on " + h.name());
  return *s;
}

}  // namespace rdmasim
