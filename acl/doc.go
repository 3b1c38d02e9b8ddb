// Package acl holds Redis 7.0's access control lists: users, their rules,
// the permission check made before each command, the ACL LOG, and the
// aclfile format. It is a leaf package: the engine describes its commands
// with a Table (names, IDs, ACL categories, the no_auth flag) and passes
// each command's keys, with what the command does to them, and its
// Pub/Sub channels to User.Allowed.
//
// # Rules
//
// Users.SetUser takes ACL SETUSER's rules and applies them all or none:
//
//	on off                      may the user authenticate
//	>pass <pass #hash !hash     add or remove a password (kept as SHA-256 hex)
//	nopass resetpass            any password works / no password works
//	~pattern %R~p %W~p %RW~p    keys the user may read and write, read, write
//	allkeys (~*) resetkeys
//	&pattern allchannels (&*) resetchannels
//	+cmd -cmd +cmd|sub -cmd|sub +cmd|firstarg
//	+@category -@category allcommands (+@all) nocommands (-@all)
//	(rules...) clearselectors   extra selectors, any one of which may allow a command
//	reset                       back to a new user's state
//
// Errors carry Redis's text ("Error in ACL SETUSER modifier '+x':
// Unknown command or category name in ACL"). User.Describe gives the
// rules back as ACL LIST prints them, in Redis 7.0's order and wording
// (categories chosen by Redis's best-fit search, then single commands);
// User.Info gives ACL GETUSER's fields.
//
// # The check
//
// User.Allowed answers whether a user may run a command: for a user
// allowed everything it is one branch, for one with a command bitmap and
// all keys one bit test, and otherwise each selector is tried in turn,
// key patterns matched with package glob (Redis's matcher). It allocates
// nothing and returns the Reason of a denial (command, key, channel) and
// which key or channel failed, for ACL LOG and ACL DRYRUN.
//
// Users, User and Log are not safe for concurrent use: the engine that
// owns them serializes access. SetUser changes a *User in place, so a
// client authenticated as the user gets the new rules at its next
// command, as in Redis.
package acl
