print("bridge-load: not yet written")
