/* Starts Swagger UI (shipped beside this file) on the server's OpenAPI document. */
"use strict";
window.SwaggerUIBundle({
  url: `${document.body.dataset.base || ""}/api/v1/openapi.json`,
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: false,
  withCredentials: true,
});
