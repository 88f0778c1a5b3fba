// SPDX-License-Identifier: GPL-2.0
/*
 * Envelope -> canonical compiled policy.
 *
 * Path rules are longest-prefix rules: the kernel applies the one rule whose
 * path is the longest prefix (on component boundaries) of the object's path.
 * The envelope's lists are additive grants, so each rule is compiled to its
 * *effective* access: what it grants itself plus what its nearest enclosing
 * subtree rule grants, except for rules that cut inheritance (deny, inputs,
 * the workspace).  A rule that can write loses exec unless an exec entry
 * names it (W^X).  Rules whose effective access equals their parent's are
 * dropped: they change nothing, and keeping them would give two envelopes
 * with the same meaning different policies.
 *
 * Everything is then sorted in the orders policy.h documents, so the same
 * meaning always compiles to the same bytes (tpol.c) and the same digest.
 * tp_envelope_parse() has checked everything that can be wrong with an
 * envelope; compiling a parsed envelope fails only for lack of memory or
 * when its destinations would multiply past the rule limit (destinations.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "policyc/fields.h"
#include "policyc/policyc_internal.h"

struct spec {
	char *path;		/* absolute, normalised */
	uint32_t kind;		/* enum tp_path_kind */
	uint32_t own;		/* what this rule grants by itself */
	bool cut;		/* does not inherit from enclosing rules */
	bool deny;
	bool explicit_exec;	/* named by filesystem.exec: keeps EXEC even if writable */
	bool is_root;
	uint32_t effective;
	bool redundant;
};

struct specs {
	struct spec *items;
	size_t count, capacity;
};

static void specs_free(struct specs *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->items[i].path);
	free(s->items);
}

static int specs_add(struct specs *s, char *path, uint32_t kind, uint32_t own, bool cut,
		     bool deny, bool explicit_exec)
{
	if (!path)
		return -ENOMEM;
	if (s->count == s->capacity) {
		size_t capacity = s->capacity ? s->capacity * 2 : 16;
		struct spec *items = realloc(s->items, capacity * sizeof(*items));

		if (!items) {
			free(path);
			return -ENOMEM;
		}
		s->items = items;
		s->capacity = capacity;
	}
	s->items[s->count++] = (struct spec){
		.path = path, .kind = kind, .own = own, .cut = cut, .deny = deny,
		.explicit_exec = explicit_exec,
	};
	return 0;
}

/*
 * Path order with '/' below every other byte: a directory's rules come right
 * after it and before its siblings ("/a", "/a/b", "/a-b"), so one pass with a
 * stack finds each rule's nearest enclosing rule.  Exact before subtree.
 */
static int tree_compare(const void *pa, const void *pb)
{
	const struct spec *a = pa, *b = pb;
	const unsigned char *x = (const unsigned char *)a->path;
	const unsigned char *y = (const unsigned char *)b->path;

	while (*x && *x == *y) {
		x++;
		y++;
	}
	if (*x != *y) {
		unsigned int cx = *x == '/' ? 1 : *x ? *x + 1u : 0;
		unsigned int cy = *y == '/' ? 1 : *y ? *y + 1u : 0;

		return cx < cy ? -1 : 1;
	}
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/*
 * Whether `dir` covers `path`.  In the envelope's model an exact rule covers
 * only its own path; `as_kernel`: this version's kernel holds every rule as
 * a subtree (filesystem.exact_paths), so there an exact rule covers what is
 * beneath it too.
 */
static bool encloses(const struct spec *dir, const char *path, bool as_kernel)
{
	size_t n = strlen(dir->path);

	if (dir->kind != TP_PATH_SUBTREE && !as_kernel)
		return false;
	if (strcmp(dir->path, "/") == 0)
		return true;
	return strncmp(path, dir->path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Merges specs with equal (path, kind): grants add up, a deny wins. */
static void merge_equal(struct specs *s)
{
	size_t out = 0;

	for (size_t i = 0; i < s->count; i++) {
		struct spec *prev = out ? &s->items[out - 1] : NULL;
		struct spec *cur = &s->items[i];

		if (prev && prev->kind == cur->kind && strcmp(prev->path, cur->path) == 0) {
			prev->deny |= cur->deny;
			prev->cut |= cur->cut;
			prev->explicit_exec |= cur->explicit_exec;
			prev->is_root |= cur->is_root;
			prev->own = prev->deny ? 0 : prev->own | cur->own;
			free(cur->path);
			continue;
		}
		s->items[out++] = *cur;
	}
	s->count = out;
}

/*
 * Effective access in one pass over the rules in tree order, with two stacks
 * of enclosing rules: grants inherit along the envelope's model (subtree
 * rules only); whether a rule changes anything is judged the kernel's way
 * (every rule a subtree), so a carve-out below an exact grant is kept.
 */
static int resolve_effective(struct specs *s)
{
	_cleanup_free_ size_t *model = calloc(s->count + 1, sizeof(*model));
	_cleanup_free_ size_t *kernel = calloc(s->count + 1, sizeof(*kernel));
	size_t model_depth = 0, kernel_depth = 0;

	if (!model || !kernel)
		return -ENOMEM;
	for (size_t i = 0; i < s->count; i++) {
		struct spec *r = &s->items[i];
		const struct spec *parent, *kernel_parent;
		uint32_t eff;

		while (model_depth && !encloses(&s->items[model[model_depth - 1]], r->path, false))
			model_depth--;
		while (kernel_depth && !encloses(&s->items[kernel[kernel_depth - 1]], r->path, true))
			kernel_depth--;
		parent = model_depth ? &s->items[model[model_depth - 1]] : NULL;
		kernel_parent = kernel_depth ? &s->items[kernel[kernel_depth - 1]] : NULL;

		eff = r->own;
		if (!r->cut && !r->deny && parent)
			eff |= parent->effective;
		if ((eff & TETHER_ACCESS_WRITE) && !r->explicit_exec)
			eff &= ~(uint32_t)TETHER_ACCESS_EXEC;
		r->effective = eff;
		/*
		 * A rule at or below a protected path that its kernel parent is
		 * above is what keeps the run's access there (a rule naming
		 * /etc/shadow re-opens it; a workspace below /var/lib/tether stays
		 * readable): never redundant.
		 */
		r->redundant = !r->is_root && kernel_parent && kernel_parent->effective == eff &&
			       (!parent || parent->effective == eff) &&
			       !tp_path_protected_between(kernel_parent->path, r->path);
		if (r->kind == TP_PATH_SUBTREE)
			model[model_depth++] = i;
		kernel[kernel_depth++] = i;
	}
	return 0;
}

static int path_rule_compare(const void *pa, const void *pb)
{
	const struct tp_path_rule *a = pa, *b = pb;
	int r = strcmp(a->path, b->path);

	return r ? r : (a->kind < b->kind ? -1 : a->kind > b->kind);
}

static int build_path_rules(const struct tp_envelope *env, struct tp_policy *policy)
{
	/* What each list grants; a deny rule grants nothing and cuts inheritance. */
	const struct {
		const struct tp_path_list *list;
		uint32_t own;
		bool deny;
	} lists[] = {
		{ &env->workspace_write, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE, false },
		{ &env->read, TETHER_ACCESS_READ, false },
		{ &env->write, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE, false },
		{ &env->exec, TETHER_ACCESS_READ | TETHER_ACCESS_EXEC, false },
		{ &env->deny, 0, true },
		{ &env->connect, TETHER_ACCESS_CONNECT, false },
	};
	_cleanup_(specs_free) struct specs s = { 0 };
	/* @system brings the system software trees back into an exec list */
	const bool exec_list = env->exec.count > 0 || env->exec_tmp.line;
	const bool system_exec = !exec_list || env->exec_system.line;
	size_t n = 0;
	int r;

	r = specs_add(&s, strdup("/"), TP_PATH_SUBTREE, TETHER_ACCESS_READ, false, false, false);
	if (r < 0)
		return r;
	s.items[0].is_root = true;
	/*
	 * root: read_only executes only where system software lives; an exec
	 * list replaces these unless it lists @system.  Everything else (/tmp, /dev/shm, /var, /srv,
	 * other runs' workspaces) holds files someone could have written.
	 */
	for (size_t i = 0; r >= 0 && system_exec && tp_system_software_trees[i]; i++)
		r = specs_add(&s, strdup(tp_system_software_trees[i]), TP_PATH_SUBTREE,
			      TETHER_ACCESS_READ | TETHER_ACCESS_EXEC, false, false, false);
	r = specs_add(&s, strdup(env->workspace_path), TP_PATH_SUBTREE, TETHER_ACCESS_READ, true,
		      false, false);
	for (size_t i = 0; r >= 0 && i < env->input_count; i++)
		r = specs_add(&s, strdup(env->inputs[i].path), TP_PATH_SUBTREE, TETHER_ACCESS_READ,
			      true, false, false);
	for (size_t l = 0; r >= 0 && l < sizeof(lists) / sizeof(*lists); l++) {
		const struct tp_path_list *list = lists[l].list;

		for (size_t i = 0; r >= 0 && i < list->count; i++)
			r = specs_add(&s, tp_entry_absolute(env->workspace_path, &list->items[i]),
				      list->items[i].kind, lists[l].own, lists[l].deny, lists[l].deny,
				      lists[l].own & TETHER_ACCESS_EXEC);
	}
	if (r < 0)
		return r;

	qsort(s.items, s.count, sizeof(*s.items), tree_compare);
	merge_equal(&s);
	r = resolve_effective(&s);
	if (r < 0)
		return r;

	policy->path_rules = calloc(s.count, sizeof(*policy->path_rules));
	if (!policy->path_rules)
		return -ENOMEM;
	for (size_t i = 0; i < s.count; i++) {
		if (s.items[i].redundant)
			continue;
		policy->path_rules[n++] = (struct tp_path_rule){
			.path = TAKE_PTR(s.items[i].path),
			.access = s.items[i].effective,
			.kind = s.items[i].kind,
		};
	}
	policy->path_rule_count = n;
	qsort(policy->path_rules, n, sizeof(*policy->path_rules), path_rule_compare);
	return 0;
}

static int net_rule_compare(const void *pa, const void *pb)
{
	const struct tp_net_rule *a = pa, *b = pb;
	int r = memcmp(a->addr, b->addr, 16);

	if (r)
		return r;
	if (a->prefixlen != b->prefixlen)
		return a->prefixlen < b->prefixlen ? -1 : 1;
	if (a->protocols != b->protocols)
		return a->protocols < b->protocols ? -1 : 1;
	if (a->port_min != b->port_min)
		return a->port_min < b->port_min ? -1 : 1;
	return a->port_max < b->port_max ? -1 : a->port_max > b->port_max;
}

static int host_rule_compare(const void *pa, const void *pb)
{
	const struct tp_host_rule *a = pa, *b = pb;
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	if (a->protocols != b->protocols)
		return a->protocols < b->protocols ? -1 : 1;
	if (a->port_min != b->port_min)
		return a->port_min < b->port_min ? -1 : 1;
	return a->port_max < b->port_max ? -1 : a->port_max > b->port_max;
}

static int string_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted, malloc'd copy of `count` strings; *out_count grows with each copy. */
static int copy_strings(char *const *from, size_t count, char ***out, size_t *out_count)
{
	char **copy = calloc(count + 1, sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	*out = copy;	/* freed with the policy, even when partly filled */
	for (size_t i = 0; i < count; i++) {
		copy[i] = strdup(from[i]);
		if (!copy[i])
			return -ENOMEM;
		(*out_count)++;
	}
	qsort(copy, count, sizeof(*copy), string_compare);
	return 0;
}

static int build_network(const struct tp_envelope *env, struct tp_policy *policy)
{
	int r = tp_destinations_compile(env->destinations, env->destination_count, policy);

	if (r)
		return r;
	policy->dns_upstreams = calloc(env->dns_upstream_count + 1, sizeof(*policy->dns_upstreams));
	if (!policy->dns_upstreams)
		return -ENOMEM;
	if (policy->host_rule_count)
		qsort(policy->host_rules, policy->host_rule_count, sizeof(*policy->host_rules),
		      host_rule_compare);
	if (policy->net_rule_count)
		qsort(policy->net_rules, policy->net_rule_count, sizeof(*policy->net_rules),
		      net_rule_compare);
	for (size_t i = 0; i < env->dns_upstream_count; i++) {
		memcpy(policy->dns_upstreams[i].addr, env->dns_upstreams[i].addr, 16);
		policy->dns_upstreams[i].port = env->dns_upstreams[i].port;
	}
	policy->dns_upstream_count = env->dns_upstream_count;
	policy->dns_ttl_min_s = env->dns_ttl_min_s;
	policy->dns_ttl_max_s = env->dns_ttl_max_s;
	r = copy_strings(env->abstract_sockets, env->abstract_socket_count,
			 &policy->abstract_sockets, &policy->abstract_socket_count);
	if (r)
		return r;
	return copy_strings(env->methods, env->method_count, &policy->methods,
			    &policy->method_count);
}

/*
 * The listed names the default set does not cover, sorted: a run gets PATH
 * whether or not the envelope lists it, so listing it must not change the
 * policy.  A hand-built envelope with a name the parser refuses is -EINVAL.
 */
static int build_environment(const struct tp_envelope *env, struct tp_policy *policy)
{
	char **names = calloc(env->env_name_count + 1, sizeof(*names));

	if (!names)
		return -ENOMEM;
	policy->env_names = names;	/* freed with the policy, even when partly filled */
	for (size_t i = 0; i < env->env_name_count; i++) {
		const char *name = env->env_names[i];

		if (!name || !tp_env_name_valid(name))
			return -EINVAL;
		for (const char *const *n = tp_env_reserved_names; *n; n++)
			if (strcmp(*n, name) == 0)
				return -EINVAL;
		if (tp_env_name_is_default(name))
			continue;
		names[policy->env_name_count] = strdup(name);
		if (!names[policy->env_name_count])
			return -ENOMEM;
		policy->env_name_count++;
	}
	qsort(names, policy->env_name_count, sizeof(*names), string_compare);
	for (size_t i = 1; i < policy->env_name_count; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			return -EINVAL;
	return policy->env_name_count > TP_ENV_NAMES_MAX ? -EINVAL : 0;
}

static int input_compare(const void *a, const void *b)
{
	return strcmp(((const struct tp_input *)a)->path, ((const struct tp_input *)b)->path);
}

/*
 * Acknowledged gaps that this envelope triggers, by name.  An exact grant
 * that compiled away (it changed nothing) leaves no exact rule behind, and
 * then no exact-path gap either: the policy's meaning does not depend on it.
 */
static int build_gaps(const struct tp_envelope *env, struct tp_policy *policy)
{
	bool exact = false;

	for (size_t i = 0; i < policy->path_rule_count; i++)
		exact |= policy->path_rules[i].kind == TP_PATH_EXACT &&
			 policy->path_rules[i].access != 0;
	policy->gaps = calloc(env->gap_count + 1, sizeof(*policy->gaps));
	if (!policy->gaps)
		return -ENOMEM;
	for (size_t i = 0; i < env->gap_count; i++) {
		bool acknowledged = false;

		if (!exact && strcmp(env->gaps[i].field, "filesystem.exact_paths") == 0)
			continue;

		for (size_t j = 0; j < env->acknowledged_count && !acknowledged; j++)
			acknowledged = strcmp(env->acknowledged[j], env->gaps[i].field) == 0;
		if (!acknowledged)
			return -EINVAL;	/* tp_envelope_parse() refuses such an envelope */
		policy->gaps[policy->gap_count] = strdup(env->gaps[i].field);
		if (!policy->gaps[policy->gap_count])
			return -ENOMEM;
		policy->gap_count++;
	}
	qsort(policy->gaps, policy->gap_count, sizeof(*policy->gaps), string_compare);
	return 0;
}

static int dup_optional(const char *from, char **to)
{
	if (!from)
		return 0;
	*to = strdup(from);
	return *to ? 0 : -ENOMEM;
}

static void tp_policy_freep(struct tp_policy **policy)
{
	tp_policy_free(*policy);
}

int tp_policy_compile(const char *name, const struct tp_envelope *env,
		      struct tp_policy **out, struct tp_diags *diags)
{
	_cleanup_(tp_policy_freep) struct tp_policy *policy = NULL;
	_cleanup_free_ char *normalized = NULL;
	uint32_t flags = 0;
	int r;

	if (!env || !out || !env->workspace_path)
		return -EINVAL;
	/* A hand-built envelope must not reach the kernel's maps unchecked. */
	normalized = tp_path_normalize(env->workspace_path);
	if (!normalized || strcmp(normalized, env->workspace_path) != 0 ||
	    strcmp(normalized, "/") == 0 || strlen(normalized) > TETHER_PATH_KEY_MAX - 1 ||
	    env->mode > TP_MODE_AUDIT)
		return -EINVAL;

	policy = calloc(1, sizeof(*policy));
	if (!policy)
		return -ENOMEM;

	policy->mode = env->mode;
	if (env->has_image_digest) {
		flags |= TP_POLICY_IMAGE_DIGEST;
		memcpy(policy->image_digest, env->image_digest, 32);
	}
	/* Absent ids are the defaults, so writing a default out changes nothing. */
	policy->uid = env->has_uid ? env->uid : TP_DEFAULT_ID;
	policy->gid = env->has_gid ? env->gid : policy->uid;
	if (policy->uid > TP_ID_MAX || policy->gid > TP_ID_MAX)
		return -EINVAL;
	flags |= env->artifacts_scan ? TP_POLICY_ARTIFACTS_SCAN : 0;
	flags |= env->artifacts_hash ? TP_POLICY_ARTIFACTS_HASH : 0;
	flags |= env->revoke_credentials ? TP_POLICY_REVOKE_CREDENTIALS : 0;
	flags |= env->verify_process_tree ? TP_POLICY_VERIFY_PROCESS_TREE : 0;
	flags |= env->audit_fail_closed ? TP_POLICY_AUDIT_FAIL_CLOSED : 0;
	flags |= env->audit_record_allowed ? TP_POLICY_AUDIT_RECORD_ALLOWED : 0;
	flags |= env->exec_tmp.line ? TP_POLICY_TMP_EXEC : 0;
	policy->flags = flags;

	r = dup_optional(env->runtime_revision, &policy->runtime_revision) ?:
	    dup_optional(env->tenant, &policy->tenant) ?:
	    dup_optional(env->run_id, &policy->run_id) ?:
	    dup_optional(env->workspace_path, &policy->workspace) ?:
	    dup_optional(env->workspace_source, &policy->workspace_source) ?:
	    dup_optional(env->workspace_ref, &policy->workspace_ref) ?:
	    dup_optional(env->audit_sink, &policy->audit_sink);
	if (r < 0)
		return r;
	policy->workspace_mode = env->workspace_mode;
	policy->lifetime = env->lifetime;

	r = build_path_rules(env, policy);
	if (r < 0)
		return r;

	policy->inputs = calloc(env->input_count + 1, sizeof(*policy->inputs));
	if (!policy->inputs)
		return -ENOMEM;
	for (size_t i = 0; i < env->input_count; i++) {
		policy->inputs[i] = env->inputs[i];
		policy->inputs[i].pos = (struct tp_pos){ 0 };
		policy->inputs[i].path = strdup(env->inputs[i].path);
		if (!policy->inputs[i].path)
			return -ENOMEM;
		policy->input_count++;
	}
	qsort(policy->inputs, policy->input_count, sizeof(*policy->inputs), input_compare);

	r = build_network(env, policy);
	if (r == -E2BIG) {
		r = tp_diags_add(diags, name, 0, 0, "the allowed destinations overlap so much that "
				 "they would compile to more than a million rules");
		return r < 0 ? r : -EINVAL;
	}
	if (r < 0)
		return r;
	memcpy(policy->limits, env->limits, sizeof(policy->limits));
	r = copy_strings(env->artifacts, env->artifact_count, &policy->artifacts,
			 &policy->artifact_count);
	if (r < 0)
		return r;
	r = build_environment(env, policy);
	if (r < 0)
		return r;
	r = build_gaps(env, policy);
	if (r < 0)
		return r;

	*out = TAKE_PTR(policy);
	return 0;
}

int tp_compile_file(const char *path, struct tp_policy **out, struct tp_diags *diags)
{
	struct tp_envelope *env = NULL;
	int r;

	r = tp_envelope_parse_file(path, &env, diags);
	if (r < 0)
		return r;
	r = tp_policy_compile(path, env, out, diags);
	tp_envelope_free(env);
	return r;
}

int tp_policy_load(const char *name, const char *data, size_t len, struct tp_policy **out,
		   struct tp_diags *diags)
{
	_cleanup_(tp_policy_freep) struct tp_policy *policy = NULL;
	char why[512] = "";
	int r;

	if (!name || (!data && len) || !out || !diags)
		return -EINVAL;
	if (len < 4 || memcmp(data, TP_FORMAT_MAGIC, 4) != 0) {
		struct tp_envelope *env = NULL;

		if (len > TP_ENVELOPE_MAX_BYTES) {
			r = tp_diags_add(diags, name, 0, 0, "the envelope is %zu bytes, over the "
					 "limit of %u bytes", len, TP_ENVELOPE_MAX_BYTES);
			return r < 0 ? r : -EFBIG;
		}
		r = tp_envelope_parse(name, data, len, &env, diags);
		if (r < 0)
			return r;
		r = tp_policy_compile(name, env, out, diags);
		tp_envelope_free(env);
		return r;
	}
	r = tp_policy_decode((const uint8_t *)data, len, &policy, why, sizeof(why));
	if (r == 0)
		r = tp_policy_validate(policy, why, sizeof(why));
	if (r == -EINVAL) {
		r = tp_diags_add(diags, name, 0, 0, "not a valid compiled policy: %s", why);
		return r < 0 ? r : -EINVAL;
	}
	if (r < 0)
		return r;
	*out = TAKE_PTR(policy);
	return 0;
}

/* Whether `bind` would change the envelope's workspace path `ws`. */
static bool binding_applies(const struct tp_run_binding *bind, const char *ws)
{
	return bind && (bind->workspace || (bind->run_id && ws && strstr(ws, TP_RUN_ID_PLACEHOLDER)));
}

int tp_policy_load_bound(const char *name, const char *data, size_t len,
			 const struct tp_run_binding *bind, struct tp_policy **out,
			 uint8_t envelope_digest[32], struct tp_diags *diags)
{
	_cleanup_(tp_policy_freep) struct tp_policy *written = NULL;
	struct tp_envelope *env = NULL;
	int r;

	if (!out)
		return -EINVAL;
	r = tp_policy_load(name, data, len, &written, diags);
	if (r < 0)
		return r;
	r = envelope_digest ? tp_policy_digest(written, envelope_digest) : 0;
	if (r < 0)
		return r;
	if (!binding_applies(bind, written->workspace)) {
		*out = TAKE_PTR(written);
		return 0;
	}
	if (len >= 4 && memcmp(data, TP_FORMAT_MAGIC, 4) == 0) {
		r = tp_diags_add(diags, name, 0, 0,
				 bind->workspace ?
				 "a compiled policy cannot take a per-run workspace: run the envelope "
				 "it was compiled from" :
				 "the workspace '%s' holds " TP_RUN_ID_PLACEHOLDER ", which only an "
				 "envelope can fill in: run the envelope this policy was compiled from",
				 written->workspace);
		return r < 0 ? r : -EINVAL;
	}
	/* the envelope parsed again with the run's values, every check run again on them */
	r = tp_envelope_parse_bound(name, data, len, bind, &env, diags);
	if (r < 0)
		return r;
	r = tp_policy_compile(name, env, out, diags);
	tp_envelope_free(env);
	return r;
}

int tp_policy_load_file_bound(const char *path, const struct tp_run_binding *bind,
			      struct tp_policy **out, uint8_t envelope_digest[32],
			      struct tp_diags *diags)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r;

	if (!path || !out || !diags)
		return -EINVAL;
	r = tp_file_read(path, TP_POLICY_MAX_BYTES, &data, &len, diags);
	if (r < 0)
		return r;
	return tp_policy_load_bound(path, data, len, bind, out, envelope_digest, diags);
}

int tp_policy_load_file(const char *path, struct tp_policy **out, struct tp_diags *diags)
{
	return tp_policy_load_file_bound(path, NULL, out, NULL, diags);
}
