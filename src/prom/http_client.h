// The HTTP client the Prometheus query API (prom/query_api.h) goes through: the HTTP layer's
// (http/client.h: the transport seam, HttpAuth, HttpError), named here for prom/'s files.
#pragma once
#include "http/client.h"
