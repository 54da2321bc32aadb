"""Facts from many nodes: the JSON-lines format `msrunwatch facts` writes on each node,
read back, checked against its schema, and merged into one run on one clock."""
