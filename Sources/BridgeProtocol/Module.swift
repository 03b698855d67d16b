// placeholder; replaced as the module grows
