"""The live terminal view of `msrunwatch DIR`: the only package that imports Textual."""
