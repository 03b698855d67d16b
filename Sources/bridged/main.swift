print("bridged: not yet wired")
