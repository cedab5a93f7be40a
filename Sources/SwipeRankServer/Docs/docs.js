// Renders /openapi.json: every path and method, its parameters, request and response schemas
// ($refs resolved, required fields and enums shown). Plain DOM, no dependencies; served as its
// own file because the page's CSP allows only same-origin scripts.
"use strict";
(function () {
  const METHODS = ["get", "put", "post", "patch", "delete", "head", "options"];
  let spec = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const child of children.flat(Infinity)) {
      if (child == null) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function resolve(ref) {
    // Only local references (#/components/...), which is all this document uses.
    let node = spec;
    for (const part of ref.replace(/^#\//, "").split("/")) {
      node = node && node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    return node || {};
  }

  function refName(ref) { return ref.split("/").pop(); }

  function typeLabel(schema) {
    if (!schema) return "any";
    if (schema.$ref) return refName(schema.$ref);
    let t = schema.type || (schema.oneOf ? "one of" : schema.anyOf ? "any of" : schema.allOf ? "all of" : "any");
    if (schema.type === "array") t = "array of " + typeLabel(schema.items);
    if (schema.format) t += " (" + schema.format + ")";
    if (schema.nullable) t += ", nullable";
    return t;
  }

  function constraints(schema) {
    const out = [];
    for (const key of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "maxProperties", "pattern"]) {
      if (schema[key] !== undefined) out.push(key + " " + schema[key]);
    }
    if (schema.exclusiveMinimum === true) out.push("exclusive minimum");
    if (schema.additionalProperties === false) out.push("no other fields");
    return out;
  }

  // A schema as a nested list; `seen` stops recursion through references already open.
  function renderSchema(schema, seen, depth) {
    schema = schema || {};
    if (schema.$ref) {
      const name = refName(schema.$ref);
      if (seen.has(name) || depth > 8) return el("span", {}, el("code", {}, name), " (see above)");
      const inner = new Set(seen); inner.add(name);
      return el("details", depth < 2 ? { open: "" } : {}, el("summary", {}, el("code", {}, name)),
        renderSchema(resolve(schema.$ref), inner, depth + 1));
    }
    const parts = [];
    if (schema.description) parts.push(el("p", { class: "muted" }, schema.description));
    const kind = schema.oneOf ? "oneOf" : schema.anyOf ? "anyOf" : schema.allOf ? "allOf" : null;
    if (kind) {
      const label = { oneOf: "Exactly one of:", anyOf: "Any of:", allOf: "All of:" }[kind];
      parts.push(el("p", {}, label + (schema.nullable ? " (or null)" : "")));
      if (schema.discriminator) parts.push(el("p", {}, "Discriminator: ", el("code", {}, schema.discriminator.propertyName)));
      parts.push(el("ul", { class: "schema" }, schema[kind].map((s) => el("li", {}, renderSchema(s, seen, depth + 1)))));
    }
    if (schema.enum) parts.push(el("p", { class: "enum" }, "One of: ", schema.enum.map((v, i) => [i ? ", " : "", el("code", {}, JSON.stringify(v))])));
    const c = constraints(schema);
    if (c.length) parts.push(el("p", { class: "muted" }, c.join("; ")));
    if (schema.properties) {
      const required = new Set(schema.required || []);
      parts.push(el("ul", { class: "schema" }, Object.entries(schema.properties).map(([name, prop]) =>
        el("li", {}, el("code", {}, name), " ", el("span", { class: "muted" }, typeLabel(prop)),
          required.has(name) ? el("span", { class: "req", title: "required" }, " required") : null,
          prop.$ref || prop.properties || prop.oneOf || prop.allOf || prop.enum || (prop.items && (prop.items.$ref || prop.items.properties))
            ? renderSchema(prop.type === "array" ? prop.items : prop, seen, depth + 1)
            : (prop.description ? el("span", { class: "muted" }, " — " + prop.description) : null)))));
    } else if (schema.type === "array" && schema.items) {
      parts.push(el("p", {}, "Array of:"), renderSchema(schema.items, seen, depth + 1));
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      parts.push(el("p", {}, "Other keys map to: ", typeLabel(schema.additionalProperties)));
    }
    if (!parts.length) parts.push(el("span", { class: "muted" }, typeLabel(schema)));
    return el("div", {}, parts);
  }

  function deref(obj) { return obj && obj.$ref ? resolve(obj.$ref) : obj; }

  function renderParameters(params) {
    if (!params.length) return null;
    return el("div", {}, el("h4", {}, "Parameters"),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Name"), el("th", { scope: "col" }, "In"),
        el("th", { scope: "col" }, "Type"), el("th", { scope: "col" }, "Details"))),
        el("tbody", {}, params.map((p) => {
          const s = p.schema || {};
          const details = [p.description, s.enum ? "one of " + s.enum.join(", ") : null, ...constraints(s)].filter(Boolean).join("; ");
          return el("tr", {}, el("td", {}, el("code", {}, p.name), p.required ? el("span", { class: "req" }, " required") : null),
            el("td", {}, p.in), el("td", {}, typeLabel(s)), el("td", {}, details));
        }))));
  }

  function renderContent(content) {
    return Object.entries(content || {}).map(([type, media]) =>
      el("div", {}, el("p", {}, "Content type ", el("code", {}, type)), renderSchema(media.schema, new Set(), 0)));
  }

  function renderOperation(path, method, op, shared) {
    const id = (method + path).replace(/[^A-Za-z0-9]+/g, "-");
    const params = [...(shared || []), ...(op.parameters || [])].map(deref);
    const security = op.security || spec.security || [];
    const auth = security.length ? security.map((s) => Object.keys(s).join(" + ")).join(" or ") : "none";
    const responses = Object.entries(op.responses || {}).map(([code, r]) => {
      r = deref(r);
      const headers = Object.keys(r.headers || {});
      return el("details", { open: "" }, el("summary", {}, el("strong", {}, code), " ", r.description || ""),
        headers.length ? el("p", { class: "muted" }, "Headers: ", headers.join(", ")) : null, renderContent(r.content));
    });
    const body = op.requestBody ? deref(op.requestBody) : null;
    return el("section", { class: "op", id, "aria-labelledby": id + "-h" },
      el("h3", { id: id + "-h" }, el("span", { class: "method m-" + method }, method.toUpperCase()), el("span", { class: "path" }, path)),
      op.summary ? el("p", {}, op.summary) : null,
      op.description ? el("p", { class: "muted" }, op.description) : null,
      el("p", { class: "muted" }, "Authentication: " + auth, op.operationId ? ["; operation id ", el("code", {}, op.operationId)] : null),
      renderParameters(params),
      body ? el("div", {}, el("h4", {}, "Request body" + (body.required ? " (required)" : " (optional)")), renderContent(body.content)) : null,
      el("h4", {}, "Responses"), responses);
  }

  function render() {
    document.getElementById("title").textContent = (spec.info && spec.info.title || "API") + " reference";
    const intro = document.getElementById("intro");
    if (spec.info && spec.info.description) intro.append(el("p", {}, spec.info.description));
    const toc = document.getElementById("toc");
    const content = document.getElementById("content");
    toc.replaceChildren(); content.replaceChildren();
    for (const [path, item] of Object.entries(spec.paths || {})) {
      const ops = METHODS.filter((m) => item[m]);
      if (!ops.length) continue;
      content.append(el("h2", {}, el("code", {}, path)));
      for (const m of ops) {
        const section = renderOperation(path, m, item[m], item.parameters);
        content.append(section);
        toc.append(el("li", {}, el("a", { href: "#" + section.id }, m.toUpperCase() + " " + path)));
      }
    }
    const schemas = (spec.components && spec.components.schemas) || {};
    content.append(el("h2", { id: "schemas" }, "Schemas"));
    toc.append(el("li", {}, el("a", { href: "#schemas" }, "Schemas")));
    for (const [name, schema] of Object.entries(schemas)) {
      content.append(el("section", { class: "op", id: "schema-" + name }, el("h3", {}, el("code", {}, name)),
        renderSchema(schema, new Set([name]), 1)));
    }
  }

  fetch("/openapi.json", { headers: { Accept: "application/json" } })
    .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then((json) => { spec = json; render(); })
    .catch((e) => {
      document.getElementById("content").replaceChildren(el("p", { role: "alert" }, "Could not load /openapi.json: " + e.message));
    });
})();
