package broker

import (
	"net"
	"net/netip"
)

// consoleOff is the "console" attribute of the HTTP listening line when
// the web console is off: how to turn it on.
const consoleOff = "off (set http.web_ui = true or IGGY_HTTP_WEB_UI=true)"

// consoleURL is the web console's address for the HTTP API bound at addr:
// scheme://host:port/ui/, with a wildcard host shown as localhost.
func consoleURL(addr net.Addr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String() + "/ui/"
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/ui/"
}
