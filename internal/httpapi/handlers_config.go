package httpapi

import (
	"fmt"
	"net/http"

	"github.com/BurntSushi/toml"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// getConfig serves GET /config, an Iggo extension (the reference has no
// configuration route): the effective configuration as one JSON object,
// TOML tables as nested objects and arrays of tables as arrays, keys as
// in the TOML file. It is config.Render's text (what `iggo server
// --print-config` prints: secrets that are set as config.Masked,
// durations and sizes in humane units) read back as TOML, so the masking
// is the config package's own. An array of tables that is empty has no
// key (Render writes no table for it). Needs read_servers or
// manage_servers (403 id 41 otherwise, as the binary server_info
// commands); 404 when the server was built without a configuration.
func (c *call) getConfig() error {
	if err := c.canReadServers(); err != nil {
		return err
	}
	if c.s.opts.EffectiveConfig == nil {
		return errNotFound()
	}
	doc, err := configDocument(c.s.opts.EffectiveConfig())
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, doc)
}

// canReadServers applies the server_info rule to the caller: the root
// user, manage_servers or read_servers; a user deleted since the token
// was issued has no permissions.
func (c *call) canReadServers() error {
	u, ok := c.s.authn.Store().UserByID(c.user())
	if !ok || !u.CanReadServers() {
		return codeError(wire.ErrUnauthorized.Code)
	}
	return nil
}

// configDocument renders cfg with secrets masked and decodes the TOML
// into nested maps.
func configDocument(cfg config.Config) (map[string]any, error) {
	text, err := config.Render(&cfg, config.RenderOptions{})
	if err != nil {
		return nil, fmt.Errorf("render configuration: %w", err)
	}
	doc := map[string]any{}
	if err := toml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("read rendered configuration: %w", err)
	}
	return doc, nil
}
