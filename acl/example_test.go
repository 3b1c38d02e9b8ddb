package acl_test

import (
	"fmt"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
)

func Example() {
	table := acl.MustTable([]acl.Command{
		{Name: "get", Categories: command.CatRead | command.CatString | command.CatFast},
		{Name: "set", Categories: command.CatWrite | command.CatString | command.CatSlow},
		{Name: "flushall", Categories: command.CatKeyspace | command.CatWrite | command.CatSlow | command.CatDangerous},
	})
	users := acl.NewUsers(table)
	_, err := users.SetUser("app", "on", ">s3cret", "+@string", "~app:*")
	fmt.Println(err)
	_, err = users.SetUser("app", "+nosuch")
	fmt.Println(err)
	for _, line := range users.List() {
		fmt.Println(line)
	}

	app := users.Get("app")
	get, _ := table.ID("get")
	keys := []acl.Key{{Name: []byte("other:1"), Flags: acl.KeyRead}}
	r := app.Allowed(get, nil, keys, nil)
	fmt.Println(r.Reason, app.DenyMessage(get, r, keys[r.Index].Name))
	fmt.Println(app.CheckPassword("s3cret"))
	// Output:
	// <nil>
	// Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL
	// user app on #1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0 ~app:* resetchannels -@all +@string
	// user default on nopass ~* &* +@all
	// key This user has no permissions to access the 'other:1' key
	// true
}
